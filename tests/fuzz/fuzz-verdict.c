/* libFuzzer harness for the verdict over run records (lib/gate/verdict.c,
 * lib/record/run-record.c), with the event log and the capture analysis
 * that make a record.
 *
 * The input (fuzz-verdict.h) is a run as the host holds it when the VM is
 * gone: EVENT frame payloads (fed to an AirlockEventLog in order, as the
 * live run and `verify` do; a frame the log refuses is skipped, as the
 * channel would have ended the run), a capture, the sinkhole's record
 * file, a policy, guest LOG lines, and the channel's end: complete or
 * not, the trailer and its end reason.
 *
 * Besides the sanitizers' findings, it aborts when:
 *   - a pass is given to a run that was not whole and watched: it must
 *     have a complete channel, a trailer ending COMPLETED or TIMEOUT, the
 *     controls phase started, a workload start, the entrypoint's exec
 *     recorded with result 0, a capture that analysed, and on the sinkhole
 *     network records that read whole (issue 19: "a pass must mean the
 *     image ran and was watched whole");
 *   - a fail or an inconclusive gives no reason, or a reason is not
 *     safe to print (the guest chooses paths and notes in them);
 *   - the counts disagree with the judged attempts, a judged attempt is
 *     not found by airlock_verdict_lookup(), or the controls' count of
 *     good ones is wrong;
 *   - the same record and policy give a different verdict (it is pure);
 *   - a run that passes still passes with its end made worse in one way:
 *     an end reason other than COMPLETED or TIMEOUT, no trailer, an
 *     incomplete channel, no capture, sinkhole records that did not read
 *     (check_worse_ends_do_not_pass). */
#include "config.h"

#include "evidence/event.h"
#include "gate/verdict.h"
#include "policy/policy.h"
#include "protocol.h"
#include "record/run-record.h"

#include "fuzz-util.h"
#include "fuzz-verdict.h"

#include <stdint.h>
#include <string.h>

int LLVMFuzzerInitialize (int *argc, char ***argv);
int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

static guint32
get_le32 (const uint8_t *p)
{
  return (guint32) p[0] | (guint32) p[1] << 8 | (guint32) p[2] << 16 | (guint32) p[3] << 24;
}

static void
check_pass_is_whole (const AirlockRunRecord *record)
{
  const AirlockEvent *exec = record->workload_exec;

  fuzz_check (record->complete);
  fuzz_check (record->has_trailer);
  fuzz_check (record->trailer.end_reason == AIRLOCK_END_COMPLETED
              || record->trailer.end_reason == AIRLOCK_END_TIMEOUT);
  fuzz_check (record->controls_ran);
  fuzz_check (record->workload_start != NULL);
  fuzz_check (exec != NULL && exec->has_result && exec->result == 0);
  fuzz_check (record->capture != NULL);
  if (record->sinkhole_records)
    fuzz_check (record->sinkhole != NULL && record->sinkhole->complete
                && record->sinkhole->records_dropped == 0);
}

static void
check_verdict (const AirlockVerdict *v, const AirlockRunRecord *record)
{
  guint n_egress = 0, n_admitted = 0, n_denied = 0, n_ok = 0;

  fuzz_check (v->kind == AIRLOCK_VERDICT_PASS || v->kind == AIRLOCK_VERDICT_FAIL
              || v->kind == AIRLOCK_VERDICT_INCONCLUSIVE);
  if (v->kind == AIRLOCK_VERDICT_PASS)
    check_pass_is_whole (record);
  else
    fuzz_check (v->reasons->len > 0);
  for (guint i = 0; i < v->reasons->len; i++)
    fuzz_check_safe_text (v->reasons->pdata[i]);
  if (v->observation)
    fuzz_check_safe_text (v->observation);

  for (guint i = 0; i < v->judged->len; i++)
    {
      const AirlockVerdictAttempt *a = &g_array_index (v->judged, AirlockVerdictAttempt, i);
      const AirlockVerdictAttempt *found = airlock_verdict_lookup (v, a->seq);

      fuzz_check (found != NULL && found->seq == a->seq);
      fuzz_check (!a->admitted || a->egress);
      n_egress += a->egress;
      n_admitted += a->admitted;
      n_denied += a->denied;
    }
  fuzz_check (v->n_attempts == n_egress);
  fuzz_check (v->n_admitted == n_admitted);
  fuzz_check (v->n_denied == n_denied);
  fuzz_check (v->n_unattributed == v->unattributed->len);
  for (guint i = 0; i < v->unattributed->len; i++)
    fuzz_check_safe_text (v->unattributed->pdata[i]);

  for (guint i = 0; i < v->controls->len; i++)
    {
      const AirlockControlResult *c = v->controls->pdata[i];

      /* Seen by the supervisor and in the capture, and taken in by the
       * sinkhole when its records are whole. */
      n_ok += c->by_supervisor && c->in_capture && (!c->sinkhole_judged || c->by_sinkhole);
    }
  fuzz_check (v->n_controls_ok == n_ok);
}

/* A run that passes, with its end made worse in one way, must not pass:
 * the record's inputs that say how the run ended (the channel, the
 * trailer's end reason, the capture) are changed one at a time on a copy,
 * and the verdict of each goes through check_verdict().  Mutating a
 * trailer's 4 bytes is a long shot for the fuzzer; this makes every
 * passing input test each way a run can end badly. */
static void
check_worse_ends_do_not_pass (const AirlockRunRecord *record, const AirlockPolicy *policy)
{
  static const guint32 bad_ends[] = { 0, AIRLOCK_END_ERROR, AIRLOCK_END_ERROR + 1, G_MAXUINT32 };

  for (guint i = 0; i < G_N_ELEMENTS (bad_ends) + 4; i++)
    {
      /* A shallow copy: the verdict reads a record and keeps no reference. */
      AirlockRunRecord worse = *record;
      g_autoptr (AirlockVerdict) v = NULL;

      if (i < G_N_ELEMENTS (bad_ends))
        worse.trailer.end_reason = bad_ends[i];
      else if (i == G_N_ELEMENTS (bad_ends))
        worse.has_trailer = FALSE;
      else if (i == G_N_ELEMENTS (bad_ends) + 1)
        {
          worse.complete = FALSE;
          worse.incomplete_reason = (char *) "the channel was cut";
        }
      else if (i == G_N_ELEMENTS (bad_ends) + 2)
        {
          worse.capture = NULL;
          worse.capture_error = (char *) "the capture was lost";
        }
      else if (record->sinkhole_records)
        {
          worse.sinkhole = NULL;
          worse.sinkhole_error = (char *) "the sinkhole's records were refused: damaged";
        }
      else
        continue;
      v = airlock_verdict_compute (&worse, policy);
      fuzz_check (v->kind != AIRLOCK_VERDICT_PASS);
      check_verdict (v, &worse);
    }
}

FUZZ_DEFINE_INITIALIZE_GLIB_WARNINGS_ABORT ()

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  g_autoptr (GPtrArray) guest_log = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (GBytes) pcap = NULL;
  g_autoptr (GBytes) sinkhole = NULL;
  g_autoptr (AirlockPolicy) policy = NULL;
  g_autoptr (AirlockRunRecord) record = NULL;
  g_autoptr (AirlockVerdict) verdict = NULL;
  g_autoptr (AirlockVerdict) again = NULL;
  AirlockEventLog *log;
  AirlockTrailer trailer = { 0 };
  guint64 seq = 1;
  size_t pos = FUZZ_VERDICT_HEADER;
  guint8 flags;

  if (size < FUZZ_VERDICT_HEADER)
    return 0;
  flags = data[0];
  trailer.end_reason = get_le32 (data + 4);
  trailer.exit_status = get_le32 (data + 12);

  log = airlock_event_log_new ();
  while (size - pos >= 5)
    {
      guint8 kind = data[pos];
      size_t len = MIN (get_le32 (data + pos + 1), size - pos - 5);
      const uint8_t *part = data + pos + 5;

      pos += 5 + len;
      switch (kind)
        {
        case FUZZ_VERDICT_PART_EVENT:
          {
            g_autoptr (GError) error = NULL;
            AirlockFrame frame = { 0 };

            frame.seq = seq;
            frame.type = AIRLOCK_FRAME_EVENT;
            frame.offset = 1000 * seq;
            frame.size = AIRLOCK_FRAME_HEADER_SIZE + len;
            /* An exact-size copy: ASan sees a read past the payload. */
            frame.payload = g_bytes_new_take (g_memdup2 (part, len), len);
            if (airlock_event_log_add_frame (log, &frame, &error))
              {
                fuzz_check (error == NULL);
                seq++;
                trailer.event_count++;
              }
            else
              fuzz_check (error != NULL);
            g_bytes_unref (frame.payload);
            break;
          }
        case FUZZ_VERDICT_PART_PCAP:
          g_clear_pointer (&pcap, g_bytes_unref);
          pcap = g_bytes_new (part, len);
          break;
        case FUZZ_VERDICT_PART_SINKHOLE:
          g_clear_pointer (&sinkhole, g_bytes_unref);
          sinkhole = g_bytes_new (part, len);
          break;
        case FUZZ_VERDICT_PART_POLICY:
          g_clear_pointer (&policy, airlock_policy_free);
          policy = airlock_policy_parse ((const char *) part, len, "fuzz.policy", NULL);
          break;
        case FUZZ_VERDICT_PART_LOG:
          {
            /* The channel hands LOG lines on escaped (channel.h): valid
             * UTF-8 without control characters. */
            g_autofree char *valid = g_utf8_make_valid ((const char *) part, (gssize) len);
            GString *line = g_string_new (NULL);

            for (const char *p = valid; *p; p = g_utf8_next_char (p))
              {
                gunichar c = g_utf8_get_char (p);

                if (g_unichar_iscntrl (c))
                  g_string_append_c (line, '?');
                else
                  g_string_append_unichar (line, c);
              }
            g_ptr_array_add (guest_log, g_string_free (line, FALSE));
            break;
          }
        default:
          break;
        }
    }
  trailer.frame_count = seq + 1;

  {
    AirlockRunRecordInput in = {
      .arch = AIRLOCK_ARCH_AMD64,
      .complete = (flags & FUZZ_VERDICT_COMPLETE) != 0,
      .incomplete_reason = (flags & 0x80) ? NULL : "the fuzzer cut the channel",
      .trailer = (flags & FUZZ_VERDICT_TRAILER) ? &trailer : NULL,
      .guest_log = guest_log,
      .log = log,
      .pcap = pcap,
      .pcap_error = (flags & 0x40) ? NULL : "the fuzzer made none",
      .sinkhole_records = sinkhole,
      .timeout_ms = get_le32 (data + 8),
    };

    record = airlock_run_record_new (&in);
  }
  airlock_event_log_free (log);   /* the record holds its own reference */

  verdict = airlock_verdict_compute (record, policy);
  /* For whoever writes seeds: FUZZ_VERDICT_PRINT=1 shows each verdict. */
  if (g_getenv ("FUZZ_VERDICT_PRINT"))
    {
      fprintf (stderr, "verdict: %s\n", airlock_verdict_kind_to_string (verdict->kind));
      for (guint i = 0; i < verdict->reasons->len; i++)
        fprintf (stderr, "  %s\n", (const char *) verdict->reasons->pdata[i]);
    }
  check_verdict (verdict, record);
  if (verdict->kind == AIRLOCK_VERDICT_PASS)
    check_worse_ends_do_not_pass (record, policy);

  /* Pure: the same record and policy, the same verdict. */
  again = airlock_verdict_compute (record, policy);
  fuzz_check (again->kind == verdict->kind);
  fuzz_check (again->reasons->len == verdict->reasons->len);
  for (guint i = 0; i < verdict->reasons->len; i++)
    fuzz_check (strcmp (again->reasons->pdata[i], verdict->reasons->pdata[i]) == 0);
  fuzz_check (again->judged->len == verdict->judged->len);
  return 0;
}
