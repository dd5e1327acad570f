"""The fake Target (`FakeTarget`, `--target fake`): the embedded fake queue (or --server's) and a
fleet of real worker processes, on this machine or a Ray cluster's nodes, driven rep by rep with
the load paced, faults applied and a watchdog looking on. Real workers, as the simulator's
(core/sim/) are policies in virtual time and the live target (core/live/) has none of ours."""
