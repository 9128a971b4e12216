// The SIGSEGV/SIGBUS handler of managed memory. A fault on a managed page is
// resolved (pending work runs, data comes back, protection relaxes) and the
// access retries; any other fault goes to the handler that was installed
// before ours, or kills the process with its usual signal.
#pragma once

namespace npvk {

// Installs the handler (again, if another took its place since) and an
// alternate signal stack for the calling thread.
void install_fault_handler();
// Re-installs the handler where another library put its own in its place
// since (UCX does in MPI_Init): that one then gets the faults that are not
// npvk's. Two sigaction queries when nothing changed; called wherever npvk
// closes pages and at its sync points, before the program can fault on them.
void ensure_fault_handler();

}  // namespace npvk
