-- wrk script: POST the same plan request on every connection (tools/load.sh).
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.body = '{"model": "llama3-70b", "cluster": {"gpu": "h100-sxm", "gpus": 512}, ' ..
           '"layout": {"tp": 8, "pp": 4, "vpp": 5, "global_batch": 512, "seq_len": 8192, "recompute": "selective"}}'
