"""Report formats, one module each: the terminal table and the JSON export."""
