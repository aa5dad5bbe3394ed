/* libFuzzer harness for the policy parser (lib/policy/policy.c).
 *
 * A policy is written by a person, but `airlock gate --policy FILE` reads
 * whatever path it is given, and a CI job may take the policy from the
 * repository under test: the parser must take any bytes.  The input is the
 * policy text; the harness parses it, and when it parses:
 *
 *   - the text airlock_policy_to_text() prints parses again, to a policy
 *     with the same number of rules that prints the same text (the
 *     round trip the header promises);
 *   - both policies decide the same for attempts derived from the input
 *     (families, protocols, addresses, ports, names, host names and
 *     executables taken from a PRNG seeded with it), and name the same
 *     admitting rule: the printed text is the same policy, not only the
 *     same words;
 *   - an attempt without a host name is decided alike by
 *     airlock_policy_admits() and airlock_policy_admits_attempt(), and
 *     one with a host name is admitted at least whenever the same attempt
 *     without it is (host= only narrows a rule);
 *   - airlock_policy_append() of the text onto the reparsed policy
 *     doubles the rules, and a failed append leaves the policy unchanged.
 *
 * When it does not parse, the error is AIRLOCK_POLICY_ERROR with a message
 * that names the policy and is valid UTF-8 (it quotes words of the input;
 * a policy is what the user wrote, so control characters in it are shown
 * as they are, as the other things a user types are). */
#include "config.h"

#include "policy/policy.h"

#include "fuzz-util.h"

#include <netinet/in.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>

int LLVMFuzzerInitialize (int *argc, char ***argv);
int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

static const char *const names[] = {
  "example.com", "www.example.com", "a.b.example.com.", "EXAMPLE.COM", "x\\.example.com",
  "localhost", "", "com", "pypi.org.", "files.pythonhosted.org.",
};

static const char *const exes[] = {
  "/usr/bin/curl", "/bin/sh", "/opt/a#b", "/usr/bin/../bin/curl", NULL,
};

static void
check_same_decisions (const AirlockPolicy *a, const AirlockPolicy *b, const uint8_t *data,
                      size_t size)
{
  guint64 state = fuzz_input_hash (data, size);
  static const int protocols[] = { IPPROTO_TCP, IPPROTO_UDP, IPPROTO_ICMP, IPPROTO_ICMPV6,
                                   IPPROTO_SCTP, 255 };

  for (int i = 0; i < 16; i++)
    {
      guint64 r = fuzz_splitmix64 (&state);
      guint8 address[16];
      const char *dns[3] = { NULL, NULL, NULL };
      int family = (r & 1) ? AF_INET6 : AF_INET;
      int protocol = protocols[(r >> 1) % G_N_ELEMENTS (protocols)];
      guint16 port = (guint16) (r >> 8);
      const char *exe = exes[(r >> 24) % G_N_ELEMENTS (exes)];
      const char *rule_a = NULL, *rule_b = NULL, *rule_plain = NULL;
      gboolean admits_a, admits_b, admits_plain;
      AirlockPolicyAttempt attempt;
      guint64 a1 = fuzz_splitmix64 (&state), a2 = fuzz_splitmix64 (&state);

      /* Half of the addresses come from the input itself, so rules written
       * in it get hit; the others are random. */
      if ((r >> 32) & 1 && size >= 16)
        memcpy (address, data + ((r >> 40) % (size - 15)), 16);
      else
        {
          memcpy (address, &a1, 8);
          memcpy (address + 8, &a2, 8);
        }
      if ((r >> 33) & 1)
        {
          /* v4-mapped: judged as the IPv4 address. */
          memset (address, 0, 10);
          address[10] = address[11] = 0xff;
        }
      if ((r >> 34) & 1)
        dns[0] = names[(r >> 48) % G_N_ELEMENTS (names)];
      if ((r >> 35) & 1)
        dns[dns[0] ? 1 : 0] = names[(r >> 56) % G_N_ELEMENTS (names)];

      attempt = (AirlockPolicyAttempt) {
        .family = family, .protocol = protocol, .address = address, .port = port,
        .dns_names = dns, .exe = exe,
        /* Names, half the time, as the sinkhole hands them out. */
        .host = (r >> 36) & 1 ? names[fuzz_splitmix64 (&state) % G_N_ELEMENTS (names)] : NULL,
      };
      admits_plain = airlock_policy_admits (a, family, protocol, address, port, dns, exe,
                                            &rule_plain);
      admits_a = airlock_policy_admits_attempt (a, &attempt, &rule_a);
      admits_b = airlock_policy_admits_attempt (b, &attempt, &rule_b);
      fuzz_check (admits_a == admits_b);
      fuzz_check (admits_a == (rule_a != NULL));
      if (admits_a)
        fuzz_check (strcmp (rule_a, rule_b) == 0);
      fuzz_check (admits_plain == (rule_plain != NULL));
      if (attempt.host == NULL)
        fuzz_check (admits_plain == admits_a && (!admits_a || rule_plain == rule_a));
      else
        fuzz_check (!admits_plain || admits_a);
    }
}

FUZZ_DEFINE_INITIALIZE_GLIB_WARNINGS_ABORT ()

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (AirlockPolicy) policy = NULL;
  g_autoptr (AirlockPolicy) again = NULL;
  g_autofree char *text = NULL;
  g_autofree char *text_again = NULL;
  g_autofree char *text_after_append = NULL;
  guint n;

  policy = airlock_policy_parse ((const char *) data, size, "fuzz.policy", &error);
  if (!policy)
    {
      fuzz_check (error != NULL);
      fuzz_check (error->domain == AIRLOCK_POLICY_ERROR);
      fuzz_check (size > AIRLOCK_POLICY_TEXT_MAX
                  ? error->code == AIRLOCK_POLICY_ERROR_TOO_LARGE
                  : error->code == AIRLOCK_POLICY_ERROR_PARSE);
      fuzz_check (g_str_has_prefix (error->message, "fuzz.policy"));
      fuzz_check (g_utf8_validate (error->message, -1, NULL));
      return 0;
    }
  fuzz_check (error == NULL);

  n = airlock_policy_get_n_rules (policy);
  text = airlock_policy_to_text (policy);
  fuzz_check (text != NULL);
  fuzz_check ((n == 0) == (text[0] == '\0'));

  again = airlock_policy_parse (text, strlen (text), "printed", &error);
  if (!again)
    {
      fprintf (stderr, "printed policy does not parse: %s\n--- printed:\n%s", error->message, text);
      fuzz_check (again != NULL);
    }
  fuzz_check (airlock_policy_get_n_rules (again) == n);
  text_again = airlock_policy_to_text (again);
  fuzz_check (strcmp (text, text_again) == 0);

  check_same_decisions (policy, again, data, size);

  /* Appending the same rules doubles them; a text that does not parse
   * leaves the policy as it was. */
  fuzz_check (airlock_policy_append (again, (const char *) data, size, "appended", &error));
  fuzz_check (airlock_policy_get_n_rules (again) == 2 * n);
  fuzz_check (!airlock_policy_append (again, "allow\n", 6, "bad", &error));
  fuzz_check (error != NULL);
  fuzz_check (airlock_policy_get_n_rules (again) == 2 * n);
  text_after_append = airlock_policy_to_text (again);
  fuzz_check (strlen (text_after_append) == 2 * strlen (text));
  fuzz_check (strncmp (text_after_append, text, strlen (text)) == 0);
  return 0;
}
