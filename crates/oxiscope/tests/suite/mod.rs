mod permission_check;
mod render_snapshots;
