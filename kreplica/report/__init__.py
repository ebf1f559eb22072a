"""Rendering only: text for people; json, ndjson and msgpack for programs. One place per schema."""
