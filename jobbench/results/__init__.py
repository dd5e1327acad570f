"""Result and comparison documents: their models, the metric names a rep's figures go by, the
one reader and writer, numbered history and the events file. The judgement is verdict/."""
