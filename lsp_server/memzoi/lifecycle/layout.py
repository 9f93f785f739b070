"""Where lifecycle operations put files, relative to the project root (Memzoi's layout, reference §1 and §2.1)."""

from __future__ import annotations

MEMZOI = ".memzoi"
RECORDS = f"{MEMZOI}/records"
PENDING = f"{MEMZOI}/proposals/pending"
APPLIED = f"{MEMZOI}/proposals/resolved/applied"
REJECTED = f"{MEMZOI}/proposals/resolved/rejected"

__all__ = ["APPLIED", "MEMZOI", "PENDING", "RECORDS", "REJECTED"]
