"""Delivery verification, one way for every client kind: what an engine reports as acked is read
into a Ledger (ledger.py), the topics are read back (read.py) and one checker judges lost,
duplicated, out of order and unread (check.py)."""
