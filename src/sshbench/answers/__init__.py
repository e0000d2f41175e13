"""The run's answers: the conclusion, its block, the builds' and conditions' answers, runs compared."""
