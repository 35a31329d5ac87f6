"""The peer bench\x27s models and the runners of each code (bench/bench_peers.py)."""
