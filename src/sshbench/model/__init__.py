"""What the trials say: summaries, rankings and their statistics."""
