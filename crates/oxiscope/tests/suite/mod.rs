mod permission_check;
