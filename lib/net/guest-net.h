/* The guest's side of the VM's one network: what the domain gives its NIC
 * and what the capture analysis takes as the guest's own.  One definition
 * for both, below the VM layer, so judging a capture needs nothing of vm/. */
#pragma once

#define AIRLOCK_NET_GUEST_MAC "52:54:00:a1:10:0c"
