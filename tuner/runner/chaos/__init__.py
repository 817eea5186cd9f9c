"""`kbt chaos`: the fault matrix (`scenarios`), the hands that break and heal the lab (`faults`,
`netem`) and the run of each (scenario, profile) (`run_matrix`)."""
