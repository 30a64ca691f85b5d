"""The PTS tests users run: pytest pts/ --device DEV --destructive (one module per PTS test)."""
