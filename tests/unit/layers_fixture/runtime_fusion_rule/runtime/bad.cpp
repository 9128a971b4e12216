// A runtime file that decides fusion itself: the check must reject it.
bool shares_kernel(unsigned long op, unsigned long now) { return now - op <= kMaxFusedSteps; }
