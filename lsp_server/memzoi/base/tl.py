import os, time
def mark(what):
    p = os.environ.get("MEMZOI_TL")
    if p:
        with open(p, "a") as f:
            f.write(f"{time.time():.4f} {time.process_time():.3f} {what}\n")
