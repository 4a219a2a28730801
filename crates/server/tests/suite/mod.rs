mod chat;
mod common;
mod hitl;
mod openapi;
mod rest;
mod tenant;
