"""bankproof: proofs about GPU shared-memory layouts."""
