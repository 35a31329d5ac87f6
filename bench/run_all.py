"""Run every bench of bench/ that exists, one after the other (make bench)."""
import glob
import os
import subprocess
import sys

here = os.path.dirname(os.path.abspath(__file__))
failed = []
for script in sorted(glob.glob(os.path.join(here, "bench_*.py"))):
    print(f"== {os.path.basename(script)}", flush=True)
    if subprocess.run([sys.executable, script]).returncode:
        failed.append(script)
sys.exit(1 if failed else 0)
