#pragma once

#include "record/run-record.h"
#include "vm/vm.h"

G_BEGIN_DECLS

/* The finished run as one record (run-record.h), made at the first call
 * and shared after: call it once airlock_vm_run() has returned.  Transfer
 * full. */
AirlockRunRecord *airlock_vm_get_record (AirlockVm *vm);

G_END_DECLS
