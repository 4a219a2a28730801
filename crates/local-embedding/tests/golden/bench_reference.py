"""Times sentence-transformers on the texts of `benches/embed.rs`.

Usage: python bench_reference.py <model dir> [runs]

Embeds the same 1,000 short texts as the Rust benchmark, batch size 32, on the CPU,
and prints the median texts per second over the runs (5 by default).
"""

import statistics
import sys
import time

from sentence_transformers import SentenceTransformer


def texts() -> list[str]:
    # Keep in step with `bench_texts` in benches/embed.rs.
    return [
        f"document {i}: the quick brown fox jumps over the lazy dog number {i % 97}"
        for i in range(1000)
    ]


def main() -> None:
    model = SentenceTransformer(sys.argv[1], device="cpu")
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    data = texts()
    model.encode(data[:64], batch_size=32)
    rates = []
    for _ in range(runs):
        start = time.perf_counter()
        model.encode(data, batch_size=32)
        rates.append(len(data) / (time.perf_counter() - start))
    print(f"sentence-transformers: median {statistics.median(rates):.1f} texts/s over {runs} runs")


if __name__ == "__main__":
    main()
