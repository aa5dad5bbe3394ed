/* The guest's side of the VM's one network: what the domain gives its NIC
 * and what the capture analysis takes as the guest's own.  One definition
 * for both, below the VM layer, so judging a capture needs nothing of vm/. */
#pragma once

/* The MAC itself is in the protocol, which the guest shares. */
#include "protocol.h"
