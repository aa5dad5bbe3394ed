/* What the library's own files and tests reach beyond the public case API
 * (the command uses case.h alone). */
#pragma once

#include "case/case.h"
#include "gate/verdict.h"
#include "image/image.h"
#include "net/flows.h"
#include "record/run-record.h"

G_BEGIN_DECLS

const char *airlock_case_get_image_ref (const AirlockCase *c);

/* The image resolved for the run's arch, or NULL for a guest program. */
const AirlockImage *airlock_run_get_image (AirlockRun *run);

/* The capture (or NULL).  Owned by the result. */
AirlockCapture *airlock_result_get_capture (AirlockResult *result);

/* result.c: the result of a finished run (takes @verdict, @record,
 * @image).  No AirlockVm: the record is the run. */
AirlockResult *airlock_result_new (AirlockArch arch, const char *case_name, AirlockImage *image,
                                   AirlockVerdict *verdict, AirlockRunRecord *record);
void airlock_result_set_bundle (AirlockResult *result, const char *dir, const char *error);

G_END_DECLS
