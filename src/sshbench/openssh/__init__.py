"""OpenSSH's own formats: what ssh -v prints, the sshd_config sshbench writes, the builds given."""
