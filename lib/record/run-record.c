#include "config.h"

#include "record/run-record.h"

#include "net/guest-net.h"
#include "protocol.h"

#include <stdio.h>

static void
derive (AirlockRunRecord *r)
{
  for (guint i = 0; i < r->events->len; i++)
    {
      const AirlockEvent *ev = r->events->pdata[i];
      gboolean controls = ev->phase == AIRLOCK_PHASE_CONTROLS;
      gboolean workload = ev->phase == AIRLOCK_PHASE_WORKLOAD;

      switch (ev->kind)
        {
        case AIRLOCK_EVENT_WORKLOAD_START:
          if (controls)
            r->controls_ran = TRUE;
          else if (workload)
            r->workload_start = ev;
          break;
        case AIRLOCK_EVENT_WORKLOAD_EXEC:
          if (controls)
            r->controls_exec = ev;
          else if (workload)
            r->workload_exec = ev;
          break;
        case AIRLOCK_EVENT_WORKLOAD_EXIT:
          if (workload)
            r->workload_exit = ev;
          break;
        default:
          break;
        }
    }
}

/* When the host received frame @seq, or 0 when the channel has no such
 * frame.  Frames are numbered from 0 by one, so it is at its index. */
static gint64
frame_received (AirlockChannel *channel, guint64 seq)
{
  GPtrArray *frames = airlock_channel_get_frames (channel);
  const AirlockFrame *f = seq < frames->len ? frames->pdata[seq] : NULL;

  return f && f->seq == seq ? f->received_mono_us : 0;
}

static void
derive_observed (AirlockRunRecord *r)
{
  const AirlockEvent *start = r->workload_start, *end = r->workload_exit;

  r->observed_guest_ms = r->observed_wall_ms = -1;
  if (!start || !end || end->seq < start->seq)
    return;
  if (end->time_ns >= start->time_ns)
    r->observed_guest_ms = (gint64) ((end->time_ns - start->time_ns) / 1000000);
  if (r->channel)
    {
      gint64 from = frame_received (r->channel, start->seq);
      gint64 to = frame_received (r->channel, end->seq);

      if (from && to >= from)
        r->observed_wall_ms = (to - from) / 1000;
    }
}

AirlockRunRecord *
airlock_run_record_new (const AirlockRunRecordInput *in)
{
  AirlockRunRecord *r = g_new0 (AirlockRunRecord, 1);

  r->ref_count = 1;
  r->arch = in->arch;
  r->complete = in->complete;
  if (!in->complete)
    r->incomplete_reason = g_strdup (in->incomplete_reason ? in->incomplete_reason
                                                           : "no reason given");
  if (in->trailer)
    {
      r->has_trailer = TRUE;
      r->trailer = *in->trailer;
    }
  r->guest_log = g_ptr_array_new_with_free_func (g_free);
  for (guint i = 0; in->guest_log && i < in->guest_log->len; i++)
    g_ptr_array_add (r->guest_log, g_strdup (in->guest_log->pdata[i]));
  if (in->log)
    {
      r->log = airlock_event_log_ref (in->log);
      r->events = g_ptr_array_ref (airlock_event_log_get_events (in->log));
    }
  else if (in->events)
    r->events = g_ptr_array_ref (in->events);
  else
    r->events = g_ptr_array_new ();
  r->timeout_ms = in->timeout_ms;
  r->clock_warp = in->clock_warp;
  r->guest_time_ms = in->clock_warp ? in->guest_time_ms : 0;
  derive (r);

  r->channel = in->channel ? airlock_channel_ref (in->channel) : NULL;
  if (!in->span_unknown)
    derive_observed (r);
  else
    r->observed_guest_ms = r->observed_wall_ms = -1;
  r->stdout_bytes = in->stdout_bytes ? g_bytes_ref (in->stdout_bytes) : g_bytes_new (NULL, 0);
  r->stderr_bytes = in->stderr_bytes ? g_bytes_ref (in->stderr_bytes) : g_bytes_new (NULL, 0);
  r->console = in->console ? g_bytes_ref (in->console) : g_bytes_new (NULL, 0);
  r->output_truncated = in->output_truncated;
  r->accel = g_strdup (in->accel);
  r->uri = g_strdup (in->uri);
  r->domain_name = g_strdup (in->domain_name);
  r->qemu_version = g_strdup (in->qemu_version);
  r->libvirt_version = g_strdup (in->libvirt_version);
  r->heartbeat_ms = in->heartbeat_ms;
  r->heartbeat_tolerance_ms = in->heartbeat_tolerance_ms;
  r->pcap = in->pcap ? g_bytes_ref (in->pcap) : NULL;
  r->pcap_error = in->pcap ? NULL : g_strdup (in->pcap_error);

  if (in->pcap)
    {
      g_autoptr (GError) error = NULL;
      AirlockCaptureGuest guest;
      guint mac[6];
      guint8 mac_bytes[6];

      /* The NIC's address, from the one definition the domain XML uses. */
      sscanf (AIRLOCK_NET_GUEST_MAC, "%x:%x:%x:%x:%x:%x", &mac[0], &mac[1], &mac[2], &mac[3],
              &mac[4], &mac[5]);
      for (int i = 0; i < 6; i++)
        mac_bytes[i] = (guint8) mac[i];
      airlock_capture_guest_init (&guest, mac_bytes);
      /* A capture that came with the sinkhole's records was written by it. */
      guest.sinkhole = in->sinkhole_records != NULL;
      r->capture = airlock_capture_analyse (in->pcap, &guest, &error);
      if (!r->capture)
        r->capture_error = g_strdup (error->message);
    }
  else
    r->capture_error = g_strdup (in->pcap_error ? in->pcap_error : "the run had no NIC");

  r->sinkhole_served = in->sinkhole_records != NULL || in->sinkhole_error != NULL;
  if (in->sinkhole_records)
    {
      g_autoptr (GError) error = NULL;

      r->sinkhole_records = g_bytes_ref (in->sinkhole_records);
      r->sinkhole = airlock_sinkhole_log_new_from_bytes (in->sinkhole_records, &error);
      if (!r->sinkhole)
        r->sinkhole_error = g_strdup_printf ("the sinkhole's records were refused: %s",
                                             error->message);
    }
  else
    r->sinkhole_error = g_strdup (in->sinkhole_error ? in->sinkhole_error
                                                     : "the run had no sinkhole network");
  return r;
}

AirlockRunRecord *
airlock_run_record_ref (AirlockRunRecord *record)
{
  g_atomic_int_inc (&record->ref_count);
  return record;
}

void
airlock_run_record_unref (AirlockRunRecord *record)
{
  if (!record || !g_atomic_int_dec_and_test (&record->ref_count))
    return;
  g_free (record->incomplete_reason);
  g_ptr_array_unref (record->guest_log);
  /* The events point into the log: the array goes first. */
  g_ptr_array_unref (record->events);
  airlock_event_log_free (record->log);
  if (record->capture)
    airlock_capture_free (record->capture);
  g_clear_pointer (&record->sinkhole_records, g_bytes_unref);
  g_clear_pointer (&record->sinkhole, airlock_sinkhole_log_free);
  g_free (record->sinkhole_error);
  g_free (record->capture_error);
  g_clear_pointer (&record->pcap, g_bytes_unref);
  g_free (record->pcap_error);
  airlock_channel_free (record->channel);
  g_bytes_unref (record->stdout_bytes);
  g_bytes_unref (record->stderr_bytes);
  g_bytes_unref (record->console);
  g_free (record->accel);
  g_free (record->uri);
  g_free (record->domain_name);
  g_free (record->qemu_version);
  g_free (record->libvirt_version);
  g_free (record);
}

const char *
airlock_run_record_last_log (const AirlockRunRecord *record)
{
  return record->guest_log->len ? record->guest_log->pdata[record->guest_log->len - 1] : NULL;
}
