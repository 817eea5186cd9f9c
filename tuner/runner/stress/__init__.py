"""`kbt stress`: the stage timeline per profile (`run_stages`), its locust processes
(`locust_processes`), the gates (`gates`), the records (`records`), the runner for a target
(`target_wiring`) and a load machine's side (`worker`)."""
