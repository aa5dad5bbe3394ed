/* airlock gate: the release gate.  `run --image --controls` on every arch
 * (cmd-run.c's run_command, which checks every input and resolves the image
 * on each arch before any boot), then the verdict of each under the policy
 * (lib/policy, default: no egress): the table of arches, every reason, and
 * the exit status the pipeline acts on. */
#include "config.h"

#include "harness.h"
#include "cmd-run.h"
#include "run-report.h"
#include "table.h"

#include <stdio.h>

/* `airlock gate`: `run --image --controls` on every arch, then the verdict
 * (lib/gate/verdict.h) under the policy (lib/policy, default: no egress). */
static int gate_report (RunReport *r);

int
cmd_gate (int argc, char **argv)
{
  return run_command (argc, argv, gate_report);
}

/* The gate's table: one row per arch, then every reason. */
static int
gate_report (RunReport *r)
{
  const gboolean *arches = r->arches;
  static const char *const header[] = {
    "arch", "controls", "attempts", "admitted", "denied", "unattributed", "ended", "verdict", NULL,
  };
  Table t;
  int status = HARNESS_EXIT_OK;

  table_init (&t, header);
  for (unsigned a = 0; a < AIRLOCK_N_ARCHES; a++)
    {
      const AirlockVerdict *v = r->results[a]
                                    ? airlock_result_get_verdict_details (r->results[a])
                                    : NULL;
      char *cells[8];

      if (!arches[a])
        continue;
      cells[0] = g_strdup (airlock_arch_to_string ((AirlockArch) a));
      if (!v)
        {
          /* The run never reached a verdict (setup, image error). */
          cells[1] = cells[2] = cells[3] = cells[4] = cells[5] = cells[6] = NULL;
          cells[7] = g_strdup ("inconclusive");
          status = MAX (status, HARNESS_EXIT_INCONCLUSIVE);
          table_add (&t, cells);
          continue;
        }
      cells[1] = g_strdup_printf ("%u/%u", v->n_controls_ok, v->controls->len);
      cells[2] = g_strdup_printf ("%u", v->n_attempts);
      cells[3] = g_strdup_printf ("%u", v->n_admitted);
      cells[4] = g_strdup_printf ("%u", v->n_denied);
      cells[5] = g_strdup_printf ("%u", v->n_unattributed);
      /* How the observation ended: a run cut by the time limit did not see
       * what the workload does later, and the table must say so. */
      cells[6] = g_strdup (v->ended_by_time_limit ? "time limit" : v->observation ? "exited" : "-");
      /* A verdict whose bundle could not be written (the disk filled up)
       * cannot be shown to anyone: the gate must not print it as a pass
       * or a fail it cannot back.  finish_case() already made the exit
       * status 4; the reason is printed below. */
      if (airlock_result_get_bundle_error (r->results[a]))
        cells[7] = g_strdup ("inconclusive");
      else
        cells[7] = g_strdup (airlock_verdict_kind_to_string (v->kind));
      table_add (&t, cells);
      if (v->kind == AIRLOCK_VERDICT_INCONCLUSIVE || airlock_result_get_bundle_error (r->results[a]))
        status = MAX (status, HARNESS_EXIT_INCONCLUSIVE);
      else if (v->kind == AIRLOCK_VERDICT_FAIL && status == HARNESS_EXIT_OK)
        status = HARNESS_EXIT_FAIL;
    }
  /* Under --json the table is for the person watching stderr; the
   * verdict lines and the summary carry it on stdout. */
  fprintf (r->text, "\nverdict\n");
  table_fprint (&t, r->text, "  ");
  for (unsigned a = 0; a < AIRLOCK_N_ARCHES; a++)
    {
      AirlockResult *res = r->results[a];
      const AirlockVerdict *v = res ? airlock_result_get_verdict_details (res) : NULL;
      const char *arch_name = airlock_arch_to_string ((AirlockArch) a);

      if (!arches[a] || !v)
        continue;
      if (airlock_result_get_manifest_digest (res))
        fprintf (r->text, "%s: bound to manifest %s\n", arch_name,
                 airlock_result_get_manifest_digest (res));
      /* Which host of a pool produced this bundle (its manifest says so
       * too), and one that failed it first. */
      if (airlock_result_get_host_failure (res))
        fprintf (r->text, "%s: hypervisor %s, after the first failed to start it (%s)\n",
                 arch_name, airlock_result_get_hypervisor (res),
                 airlock_result_get_host_failure (res));
      else if (r->pool)
        fprintf (r->text, "%s: hypervisor %s\n", arch_name, airlock_result_get_hypervisor (res));
      if (airlock_result_get_bundle_error (res))
        fprintf (r->text, "%s: the evidence bundle '%s' could not be written: %s; a verdict "
                 "without its evidence does not count\n",
                 arch_name, airlock_result_get_bundle_dir (res), airlock_result_get_bundle_error (res));
      if (v->observation)
        fprintf (r->text, "%s: %s\n", arch_name, v->observation);
      for (guint i = 0; i < v->reasons->len; i++)
        fprintf (r->text, "%s: %s\n", arch_name, (const char *) v->reasons->pdata[i]);
    }
  fflush (r->text);
  if (r->json)
    run_report_json_verdicts (r);
  return status;
}
