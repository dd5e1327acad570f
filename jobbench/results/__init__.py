"""Result and comparison documents: models, store, compare, the gate's decision."""
