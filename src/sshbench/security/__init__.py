"""Security verdicts (ssh-audit's ratings plus sshbench's documented overrides), Terrapin awareness,
`sshbench recommend` and `sshbench audit`. Only audit_adapter.py imports ssh-audit."""
