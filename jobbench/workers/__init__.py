"""Worker kinds: the runpod SDK entrypoint, the policy-model worker, a user command."""
