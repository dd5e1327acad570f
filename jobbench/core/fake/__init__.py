"""The fake Target (`FakeTarget`): the embedded fake queue (or --server's) and a fleet of real
worker processes, driven rep by rep with the load paced, faults applied and a watchdog looking
on."""
