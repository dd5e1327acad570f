"""The simulated Target and its engine: a rep in virtual time, in this process, on the same
queue and model policies the fake target runs, and the prediction saved beside measured reps."""
