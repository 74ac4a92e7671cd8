"""The Hopper/Blackwell engines' address functions: TMA swizzle modes (:mod:`.tma`) and the wgmma
and tcgen05 shared-memory descriptors (:mod:`.descriptors`)."""
