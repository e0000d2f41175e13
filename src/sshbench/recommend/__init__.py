"""What to do with the numbers: a paste-ready, verified config (`config`: `sshbench recommend`) and a judgement
of the ssh settings a user has now (`audit`: `sshbench audit`)."""
