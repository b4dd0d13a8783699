"""Training a memory over epochs: passes over a train split with memory writes, each
followed by a frozen pass over a validation split; the memory kept is the one that scored
best on validation (:mod:`arcmemo.train.loop`, recorded by :mod:`arcmemo.train.record`)."""
