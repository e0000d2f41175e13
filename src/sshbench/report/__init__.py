"""Reports of a RunResult: the terminal table (`table`), and one module per export format, registered in
`formats.FORMATS` (markdown, csv, json, html); charts (`charts`), the links table (`link_table`)."""
