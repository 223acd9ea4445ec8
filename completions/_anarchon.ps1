
using namespace System.Management.Automation
using namespace System.Management.Automation.Language

Register-ArgumentCompleter -Native -CommandName 'anarchon' -ScriptBlock {
    param($wordToComplete, $commandAst, $cursorPosition)

    $commandElements = $commandAst.CommandElements
    $command = @(
        'anarchon'
        for ($i = 1; $i -lt $commandElements.Count; $i++) {
            $element = $commandElements[$i]
            if ($element -isnot [StringConstantExpressionAst] -or
                $element.StringConstantType -ne [StringConstantType]::BareWord -or
                $element.Value.StartsWith('-') -or
                $element.Value -eq $wordToComplete) {
                break
        }
        $element.Value
    }) -join ';'

    $completions = @(switch ($command) {
        'anarchon' {
            [CompletionResult]::new('--redis', '--redis', [CompletionResultType]::ParameterName, 'Redis or Valkey URL: redis://[user:password@]host:port[/db], rediss:// for TLS, redis+cluster:// for Redis Cluster, redis+sentinel://host:port[,host:port]/<master>[/db] to ask Sentinel for the current primary (after a failover, the new one)')
            [CompletionResult]::new('--host', '--host', [CompletionResultType]::ParameterName, 'Host to connect to, instead of a URL [default: localhost]. --host, --port and --db, like redis-cli''s, win over $ANARCHON_REDIS_URL and $REDIS_URL')
            [CompletionResult]::new('-p', '-p', [CompletionResultType]::ParameterName, 'Port [default: 6379]; alone, on localhost')
            [CompletionResult]::new('--port', '--port', [CompletionResultType]::ParameterName, 'Port [default: 6379]; alone, on localhost')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Database number [default: 0]')
            [CompletionResult]::new('--db', '--db', [CompletionResultType]::ParameterName, 'Database number [default: 0]')
            [CompletionResult]::new('--user', '--user', [CompletionResultType]::ParameterName, 'ACL user name (on any URL or --host)')
            [CompletionResult]::new('--password-file', '--password-file', [CompletionResultType]::ParameterName, 'Read the password from the first line of this file (else $ANARCHON_REDIS_PASSWORD). Used when the URL carries none. Never printed')
            [CompletionResult]::new('--tls-ca', '--tls-ca', [CompletionResultType]::ParameterName, 'Trust this PEM CA bundle for TLS instead of the system''s')
            [CompletionResult]::new('--prefix', '--prefix', [CompletionResultType]::ParameterName, 'Prefix of every key, as the scheduler''s `prefix` option')
            [CompletionResult]::new('--backend', '--backend', [CompletionResultType]::ParameterName, 'redis, or valkey: the Valkey flavour, which refuses the idmp strategy')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to use colour: auto (a terminal without NO_COLOR), always, never')
            [CompletionResult]::new('--connect-timeout', '--connect-timeout', [CompletionResultType]::ParameterName, 'Give up connecting after this long')
            [CompletionResult]::new('--command-timeout', '--command-timeout', [CompletionResultType]::ParameterName, 'Give up waiting for one reply after this long')
            [CompletionResult]::new('--tls', '--tls', [CompletionResultType]::ParameterName, 'Connect with TLS (as a rediss:// URL does), with --host or --port')
            [CompletionResult]::new('--tls-insecure', '--tls-insecure', [CompletionResultType]::ParameterName, 'Do not verify the server''s TLS certificate (testing only)')
            [CompletionResult]::new('--cluster', '--cluster', [CompletionResultType]::ParameterName, 'Use the Redis Cluster client (also implied by a redis+cluster:// or rediss+cluster:// URL)')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print one JSON document instead of text (stable shape, see README)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('claim', 'claim', [CompletionResultType]::ParameterValue, 'Claim one run of a job: exactly one caller wins it')
            [CompletionResult]::new('heartbeat', 'heartbeat', [CompletionResultType]::ParameterValue, 'Push the lease of a run you hold forward (only with the current attempt''s token)')
            [CompletionResult]::new('finish', 'finish', [CompletionResultType]::ParameterValue, 'End a run you hold as ok or failed, recording its result')
            [CompletionResult]::new('run', 'run', [CompletionResultType]::ParameterValue, 'Run a command for one scheduled run, on whichever host wins it (the crontab wrapper)')
            [CompletionResult]::new('list', 'list', [CompletionResultType]::ParameterValue, 'List every job under the prefix: layout, runs in progress, last run, last result, history')
            [CompletionResult]::new('inspect', 'inspect', [CompletionResultType]::ParameterValue, 'Show one job in full: runs in progress with their leases, recent runs and results, keys')
            [CompletionResult]::new('history', 'history', [CompletionResultType]::ParameterValue, 'Show a job''s attempts and results, newest first')
            [CompletionResult]::new('logs', 'logs', [CompletionResultType]::ParameterValue, 'Show what a job''s runs left behind: stderr tail, exit code or signal, timeout, duration')
            [CompletionResult]::new('trim', 'trim', [CompletionResultType]::ParameterValue, 'Trim a job''s history (or every job''s) with the scheduler''s rules')
            [CompletionResult]::new('release', 'release', [CompletionResultType]::ParameterValue, 'Break the lease of a run in progress, without its token (a hung or vanished holder)')
            [CompletionResult]::new('pause', 'pause', [CompletionResultType]::ParameterValue, 'Pause a job across the fleet: every host''s `run` skips it (exit 87) until `resume` or --until')
            [CompletionResult]::new('resume', 'resume', [CompletionResultType]::ParameterValue, 'End a job''s pause: its next scheduled run is claimed as usual')
            [CompletionResult]::new('migrate', 'migrate', [CompletionResultType]::ParameterValue, 'Convert the store to the newest format (format 1 to 2), safely while hosts claim')
            [CompletionResult]::new('run-now', 'run-now', [CompletionResultType]::ParameterValue, 'Start a manual run of a job now, with or without a command')
            [CompletionResult]::new('doctor', 'doctor', [CompletionResultType]::ParameterValue, 'Check the server: kind and version, strategies, mode, eviction, format, clock, latency')
            [CompletionResult]::new('completions', 'completions', [CompletionResultType]::ParameterValue, 'Print shell completions (bash, zsh, fish, powershell, elvish), or write them all to --dir')
            [CompletionResult]::new('man', 'man', [CompletionResultType]::ParameterValue, 'Print the man page, or write one per command to --dir')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'anarchon;claim' {
            [CompletionResult]::new('--slot', '--slot', [CompletionResultType]::ParameterName, 'The run: `now` (this minute by the server''s clock), ms since the epoch, or RFC 3339')
            [CompletionResult]::new('--strategy', '--strategy', [CompletionResultType]::ParameterName, 'lease (default): leases, backups, overlap protection, retries. stream-id, idmp, script: claim-only strategies that only decide who runs (see README)')
            [CompletionResult]::new('--window', '--window', [CompletionResultType]::ParameterName, 'script strategy: how long a claimed run is remembered; must exceed --max-late [default: 5m]')
            [CompletionResult]::new('--idmp-duration', '--idmp-duration', [CompletionResultType]::ParameterName, 'idmp strategy: seconds Redis remembers a run''s idempotency ID (1..86400) [default: 300]')
            [CompletionResult]::new('--idmp-max-size', '--idmp-max-size', [CompletionResultType]::ParameterName, 'idmp strategy: run IDs Redis keeps per job (1..10000) [default: 1000]')
            [CompletionResult]::new('--lease', '--lease', [CompletionResultType]::ParameterName, 'How long a claim holds the run without a heartbeat [default: 30s]')
            [CompletionResult]::new('--max-attempts', '--max-attempts', [CompletionResultType]::ParameterName, 'Attempts in all: after a holder''s lease expires, a new claim takes attempt+1 until this many [default: 3]')
            [CompletionResult]::new('--overlap', '--overlap', [CompletionResultType]::ParameterName, 'forbid: answer overlap while an older run of the job holds a live lease; allow: do not check [default: forbid]')
            [CompletionResult]::new('--runner', '--runner', [CompletionResultType]::ParameterName, 'Who is claiming, recorded in the run (default host:pid)')
            [CompletionResult]::new('--history-size', '--history-size', [CompletionResultType]::ParameterName, 'Keep about this many runs of history per job (the scheduler''s historySize) [default: 1000]')
            [CompletionResult]::new('--history-ttl', '--history-ttl', [CompletionResultType]::ParameterName, 'Also drop history older than this (the scheduler''s historyTtlMs)')
            [CompletionResult]::new('--redis', '--redis', [CompletionResultType]::ParameterName, 'Redis or Valkey URL: redis://[user:password@]host:port[/db], rediss:// for TLS, redis+cluster:// for Redis Cluster, redis+sentinel://host:port[,host:port]/<master>[/db] to ask Sentinel for the current primary (after a failover, the new one)')
            [CompletionResult]::new('--host', '--host', [CompletionResultType]::ParameterName, 'Host to connect to, instead of a URL [default: localhost]. --host, --port and --db, like redis-cli''s, win over $ANARCHON_REDIS_URL and $REDIS_URL')
            [CompletionResult]::new('-p', '-p', [CompletionResultType]::ParameterName, 'Port [default: 6379]; alone, on localhost')
            [CompletionResult]::new('--port', '--port', [CompletionResultType]::ParameterName, 'Port [default: 6379]; alone, on localhost')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Database number [default: 0]')
            [CompletionResult]::new('--db', '--db', [CompletionResultType]::ParameterName, 'Database number [default: 0]')
            [CompletionResult]::new('--user', '--user', [CompletionResultType]::ParameterName, 'ACL user name (on any URL or --host)')
            [CompletionResult]::new('--password-file', '--password-file', [CompletionResultType]::ParameterName, 'Read the password from the first line of this file (else $ANARCHON_REDIS_PASSWORD). Used when the URL carries none. Never printed')
            [CompletionResult]::new('--tls-ca', '--tls-ca', [CompletionResultType]::ParameterName, 'Trust this PEM CA bundle for TLS instead of the system''s')
            [CompletionResult]::new('--prefix', '--prefix', [CompletionResultType]::ParameterName, 'Prefix of every key, as the scheduler''s `prefix` option')
            [CompletionResult]::new('--backend', '--backend', [CompletionResultType]::ParameterName, 'redis, or valkey: the Valkey flavour, which refuses the idmp strategy')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to use colour: auto (a terminal without NO_COLOR), always, never')
            [CompletionResult]::new('--connect-timeout', '--connect-timeout', [CompletionResultType]::ParameterName, 'Give up connecting after this long')
            [CompletionResult]::new('--command-timeout', '--command-timeout', [CompletionResultType]::ParameterName, 'Give up waiting for one reply after this long')
            [CompletionResult]::new('--new', '--new', [CompletionResultType]::ParameterName, 'Create the job if the store does not know it yet. Needed only on a terminal (a person''s typo must not create a job); scripts and crontabs create jobs as they claim them')
            [CompletionResult]::new('--tls', '--tls', [CompletionResultType]::ParameterName, 'Connect with TLS (as a rediss:// URL does), with --host or --port')
            [CompletionResult]::new('--tls-insecure', '--tls-insecure', [CompletionResultType]::ParameterName, 'Do not verify the server''s TLS certificate (testing only)')
            [CompletionResult]::new('--cluster', '--cluster', [CompletionResultType]::ParameterName, 'Use the Redis Cluster client (also implied by a redis+cluster:// or rediss+cluster:// URL)')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print one JSON document instead of text (stable shape, see README)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'anarchon;heartbeat' {
            [CompletionResult]::new('--slot', '--slot', [CompletionResultType]::ParameterName, 'The run: `now` (this minute by the server''s clock), ms since the epoch, or RFC 3339')
            [CompletionResult]::new('--strategy', '--strategy', [CompletionResultType]::ParameterName, 'lease (default): leases, backups, overlap protection, retries. stream-id, idmp, script: claim-only strategies that only decide who runs (see README)')
            [CompletionResult]::new('--window', '--window', [CompletionResultType]::ParameterName, 'script strategy: how long a claimed run is remembered; must exceed --max-late [default: 5m]')
            [CompletionResult]::new('--idmp-duration', '--idmp-duration', [CompletionResultType]::ParameterName, 'idmp strategy: seconds Redis remembers a run''s idempotency ID (1..86400) [default: 300]')
            [CompletionResult]::new('--idmp-max-size', '--idmp-max-size', [CompletionResultType]::ParameterName, 'idmp strategy: run IDs Redis keeps per job (1..10000) [default: 1000]')
            [CompletionResult]::new('--token', '--token', [CompletionResultType]::ParameterName, 'The token `claim` printed')
            [CompletionResult]::new('--lease', '--lease', [CompletionResultType]::ParameterName, 'The new lease, from now by the server''s clock')
            [CompletionResult]::new('--redis', '--redis', [CompletionResultType]::ParameterName, 'Redis or Valkey URL: redis://[user:password@]host:port[/db], rediss:// for TLS, redis+cluster:// for Redis Cluster, redis+sentinel://host:port[,host:port]/<master>[/db] to ask Sentinel for the current primary (after a failover, the new one)')
            [CompletionResult]::new('--host', '--host', [CompletionResultType]::ParameterName, 'Host to connect to, instead of a URL [default: localhost]. --host, --port and --db, like redis-cli''s, win over $ANARCHON_REDIS_URL and $REDIS_URL')
            [CompletionResult]::new('-p', '-p', [CompletionResultType]::ParameterName, 'Port [default: 6379]; alone, on localhost')
            [CompletionResult]::new('--port', '--port', [CompletionResultType]::ParameterName, 'Port [default: 6379]; alone, on localhost')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Database number [default: 0]')
            [CompletionResult]::new('--db', '--db', [CompletionResultType]::ParameterName, 'Database number [default: 0]')
            [CompletionResult]::new('--user', '--user', [CompletionResultType]::ParameterName, 'ACL user name (on any URL or --host)')
            [CompletionResult]::new('--password-file', '--password-file', [CompletionResultType]::ParameterName, 'Read the password from the first line of this file (else $ANARCHON_REDIS_PASSWORD). Used when the URL carries none. Never printed')
            [CompletionResult]::new('--tls-ca', '--tls-ca', [CompletionResultType]::ParameterName, 'Trust this PEM CA bundle for TLS instead of the system''s')
            [CompletionResult]::new('--prefix', '--prefix', [CompletionResultType]::ParameterName, 'Prefix of every key, as the scheduler''s `prefix` option')
            [CompletionResult]::new('--backend', '--backend', [CompletionResultType]::ParameterName, 'redis, or valkey: the Valkey flavour, which refuses the idmp strategy')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to use colour: auto (a terminal without NO_COLOR), always, never')
            [CompletionResult]::new('--connect-timeout', '--connect-timeout', [CompletionResultType]::ParameterName, 'Give up connecting after this long')
            [CompletionResult]::new('--command-timeout', '--command-timeout', [CompletionResultType]::ParameterName, 'Give up waiting for one reply after this long')
            [CompletionResult]::new('--tls', '--tls', [CompletionResultType]::ParameterName, 'Connect with TLS (as a rediss:// URL does), with --host or --port')
            [CompletionResult]::new('--tls-insecure', '--tls-insecure', [CompletionResultType]::ParameterName, 'Do not verify the server''s TLS certificate (testing only)')
            [CompletionResult]::new('--cluster', '--cluster', [CompletionResultType]::ParameterName, 'Use the Redis Cluster client (also implied by a redis+cluster:// or rediss+cluster:// URL)')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print one JSON document instead of text (stable shape, see README)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'anarchon;finish' {
            [CompletionResult]::new('--slot', '--slot', [CompletionResultType]::ParameterName, 'The run: `now` (this minute by the server''s clock), ms since the epoch, or RFC 3339')
            [CompletionResult]::new('--strategy', '--strategy', [CompletionResultType]::ParameterName, 'lease (default): leases, backups, overlap protection, retries. stream-id, idmp, script: claim-only strategies that only decide who runs (see README)')
            [CompletionResult]::new('--window', '--window', [CompletionResultType]::ParameterName, 'script strategy: how long a claimed run is remembered; must exceed --max-late [default: 5m]')
            [CompletionResult]::new('--idmp-duration', '--idmp-duration', [CompletionResultType]::ParameterName, 'idmp strategy: seconds Redis remembers a run''s idempotency ID (1..86400) [default: 300]')
            [CompletionResult]::new('--idmp-max-size', '--idmp-max-size', [CompletionResultType]::ParameterName, 'idmp strategy: run IDs Redis keeps per job (1..10000) [default: 1000]')
            [CompletionResult]::new('--token', '--token', [CompletionResultType]::ParameterName, 'The token `claim` printed')
            [CompletionResult]::new('--status', '--status', [CompletionResultType]::ParameterName, 'How the run ended')
            [CompletionResult]::new('--result', '--result', [CompletionResultType]::ParameterName, 'A result to record, as text')
            [CompletionResult]::new('--result-json', '--result-json', [CompletionResultType]::ParameterName, 'A result to record, as JSON')
            [CompletionResult]::new('--redis', '--redis', [CompletionResultType]::ParameterName, 'Redis or Valkey URL: redis://[user:password@]host:port[/db], rediss:// for TLS, redis+cluster:// for Redis Cluster, redis+sentinel://host:port[,host:port]/<master>[/db] to ask Sentinel for the current primary (after a failover, the new one)')
            [CompletionResult]::new('--host', '--host', [CompletionResultType]::ParameterName, 'Host to connect to, instead of a URL [default: localhost]. --host, --port and --db, like redis-cli''s, win over $ANARCHON_REDIS_URL and $REDIS_URL')
            [CompletionResult]::new('-p', '-p', [CompletionResultType]::ParameterName, 'Port [default: 6379]; alone, on localhost')
            [CompletionResult]::new('--port', '--port', [CompletionResultType]::ParameterName, 'Port [default: 6379]; alone, on localhost')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Database number [default: 0]')
            [CompletionResult]::new('--db', '--db', [CompletionResultType]::ParameterName, 'Database number [default: 0]')
            [CompletionResult]::new('--user', '--user', [CompletionResultType]::ParameterName, 'ACL user name (on any URL or --host)')
            [CompletionResult]::new('--password-file', '--password-file', [CompletionResultType]::ParameterName, 'Read the password from the first line of this file (else $ANARCHON_REDIS_PASSWORD). Used when the URL carries none. Never printed')
            [CompletionResult]::new('--tls-ca', '--tls-ca', [CompletionResultType]::ParameterName, 'Trust this PEM CA bundle for TLS instead of the system''s')
            [CompletionResult]::new('--prefix', '--prefix', [CompletionResultType]::ParameterName, 'Prefix of every key, as the scheduler''s `prefix` option')
            [CompletionResult]::new('--backend', '--backend', [CompletionResultType]::ParameterName, 'redis, or valkey: the Valkey flavour, which refuses the idmp strategy')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to use colour: auto (a terminal without NO_COLOR), always, never')
            [CompletionResult]::new('--connect-timeout', '--connect-timeout', [CompletionResultType]::ParameterName, 'Give up connecting after this long')
            [CompletionResult]::new('--command-timeout', '--command-timeout', [CompletionResultType]::ParameterName, 'Give up waiting for one reply after this long')
            [CompletionResult]::new('--tls', '--tls', [CompletionResultType]::ParameterName, 'Connect with TLS (as a rediss:// URL does), with --host or --port')
            [CompletionResult]::new('--tls-insecure', '--tls-insecure', [CompletionResultType]::ParameterName, 'Do not verify the server''s TLS certificate (testing only)')
            [CompletionResult]::new('--cluster', '--cluster', [CompletionResultType]::ParameterName, 'Use the Redis Cluster client (also implied by a redis+cluster:// or rediss+cluster:// URL)')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print one JSON document instead of text (stable shape, see README)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'anarchon;run' {
            [CompletionResult]::new('--job', '--job', [CompletionResultType]::ParameterName, 'The job''s name (at most 200 bytes; no braces or control characters)')
            [CompletionResult]::new('--schedule', '--schedule', [CompletionResultType]::ParameterName, 'Cron schedule the crontab line follows: 5 fields, 6 with seconds first, or @hourly style. The run is its latest fire time at or before the Redis server''s clock')
            [CompletionResult]::new('--tz', '--tz', [CompletionResultType]::ParameterName, 'Time zone of --schedule (IANA name) [default: UTC]')
            [CompletionResult]::new('--slot', '--slot', [CompletionResultType]::ParameterName, 'Run this slot instead of one from --schedule: `now` (this minute), ms, or RFC 3339')
            [CompletionResult]::new('--max-late', '--max-late', [CompletionResultType]::ParameterName, 'Do not run a scheduled slot this much later than its time (exit 84)')
            [CompletionResult]::new('--jitter', '--jitter', [CompletionResultType]::ParameterName, 'Wait a delay of up to this long before claiming, the same on every host for one job and slot (derived from both), so that many jobs on one schedule do not all hit Redis and start their work in the same second (the backend''s jitterMs). Not counted against --max-late')
            [CompletionResult]::new('--catch-up', '--catch-up', [CompletionResultType]::ParameterName, 'Also run, oldest first, the schedule''s slots within this window that no host ever claimed')
            [CompletionResult]::new('--strategy', '--strategy', [CompletionResultType]::ParameterName, 'lease (default): leases, backups, overlap protection, retries. stream-id, idmp, script: claim-only strategies that only decide who runs (see README)')
            [CompletionResult]::new('--window', '--window', [CompletionResultType]::ParameterName, 'script strategy: how long a claimed run is remembered; must exceed --max-late [default: 5m]')
            [CompletionResult]::new('--idmp-duration', '--idmp-duration', [CompletionResultType]::ParameterName, 'idmp strategy: seconds Redis remembers a run''s idempotency ID (1..86400) [default: 300]')
            [CompletionResult]::new('--idmp-max-size', '--idmp-max-size', [CompletionResultType]::ParameterName, 'idmp strategy: run IDs Redis keeps per job (1..10000) [default: 1000]')
            [CompletionResult]::new('--lease', '--lease', [CompletionResultType]::ParameterName, 'How long a claim holds the run without a heartbeat [default: 30s]')
            [CompletionResult]::new('--max-attempts', '--max-attempts', [CompletionResultType]::ParameterName, 'Attempts in all: after a holder''s lease expires, a new claim takes attempt+1 until this many [default: 3]')
            [CompletionResult]::new('--overlap', '--overlap', [CompletionResultType]::ParameterName, 'forbid: answer overlap while an older run of the job holds a live lease; allow: do not check [default: forbid]')
            [CompletionResult]::new('--runner', '--runner', [CompletionResultType]::ParameterName, 'Who is claiming, recorded in the run (default host:pid)')
            [CompletionResult]::new('--history-size', '--history-size', [CompletionResultType]::ParameterName, 'Keep about this many runs of history per job (the scheduler''s historySize) [default: 1000]')
            [CompletionResult]::new('--history-ttl', '--history-ttl', [CompletionResultType]::ParameterName, 'Also drop history older than this (the scheduler''s historyTtlMs)')
            [CompletionResult]::new('--backup-for', '--backup-for', [CompletionResultType]::ParameterName, 'Stand by as a backup for at most this long [default: as long as the run is held and has attempts left]. A backup follows the holder''s lease and takes over the moment it expires')
            [CompletionResult]::new('--heartbeat', '--heartbeat', [CompletionResultType]::ParameterName, 'Heartbeat interval while the command runs (default: a third of --lease)')
            [CompletionResult]::new('--on-lease-lost', '--on-lease-lost', [CompletionResultType]::ParameterName, 'What to do with the command when the lease is lost: terminate it, or let it continue [default: terminate]')
            [CompletionResult]::new('--kill-after', '--kill-after', [CompletionResultType]::ParameterName, 'Grace between SIGTERM and SIGKILL when anarchon stops the command')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'Stop the command after this long and record it as failed (exit 124)')
            [CompletionResult]::new('--redis', '--redis', [CompletionResultType]::ParameterName, 'Redis or Valkey URL: redis://[user:password@]host:port[/db], rediss:// for TLS, redis+cluster:// for Redis Cluster, redis+sentinel://host:port[,host:port]/<master>[/db] to ask Sentinel for the current primary (after a failover, the new one)')
            [CompletionResult]::new('--host', '--host', [CompletionResultType]::ParameterName, 'Host to connect to, instead of a URL [default: localhost]. --host, --port and --db, like redis-cli''s, win over $ANARCHON_REDIS_URL and $REDIS_URL')
            [CompletionResult]::new('-p', '-p', [CompletionResultType]::ParameterName, 'Port [default: 6379]; alone, on localhost')
            [CompletionResult]::new('--port', '--port', [CompletionResultType]::ParameterName, 'Port [default: 6379]; alone, on localhost')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Database number [default: 0]')
            [CompletionResult]::new('--db', '--db', [CompletionResultType]::ParameterName, 'Database number [default: 0]')
            [CompletionResult]::new('--user', '--user', [CompletionResultType]::ParameterName, 'ACL user name (on any URL or --host)')
            [CompletionResult]::new('--password-file', '--password-file', [CompletionResultType]::ParameterName, 'Read the password from the first line of this file (else $ANARCHON_REDIS_PASSWORD). Used when the URL carries none. Never printed')
            [CompletionResult]::new('--tls-ca', '--tls-ca', [CompletionResultType]::ParameterName, 'Trust this PEM CA bundle for TLS instead of the system''s')
            [CompletionResult]::new('--prefix', '--prefix', [CompletionResultType]::ParameterName, 'Prefix of every key, as the scheduler''s `prefix` option')
            [CompletionResult]::new('--backend', '--backend', [CompletionResultType]::ParameterName, 'redis, or valkey: the Valkey flavour, which refuses the idmp strategy')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to use colour: auto (a terminal without NO_COLOR), always, never')
            [CompletionResult]::new('--connect-timeout', '--connect-timeout', [CompletionResultType]::ParameterName, 'Give up connecting after this long')
            [CompletionResult]::new('--command-timeout', '--command-timeout', [CompletionResultType]::ParameterName, 'Give up waiting for one reply after this long')
            [CompletionResult]::new('--no-backup', '--no-backup', [CompletionResultType]::ParameterName, 'When another host holds the run, exit at once (82) instead of waiting as its backup')
            [CompletionResult]::new('--skipped-ok', '--skipped-ok', [CompletionResultType]::ParameterName, 'Exit 0 instead of 80/81/82/87 when another host holds or already ran the slot, or the job is paused (for monitoring that treats any non-zero cron exit as a failure). Too late (84) stays non-zero')
            [CompletionResult]::new('--shell', '--shell', [CompletionResultType]::ParameterName, 'Run the command line with /bin/sh -c (the words after -- joined by spaces)')
            [CompletionResult]::new('--foreground', '--foreground', [CompletionResultType]::ParameterName, 'Keep the command in anarchon''s process group, so it can read from the terminal (as `timeout --foreground`). Signals then reach the command alone, not its children')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'No progress or notes on stderr; errors and lost leases are still reported')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'No progress or notes on stderr; errors and lost leases are still reported')
            [CompletionResult]::new('--tls', '--tls', [CompletionResultType]::ParameterName, 'Connect with TLS (as a rediss:// URL does), with --host or --port')
            [CompletionResult]::new('--tls-insecure', '--tls-insecure', [CompletionResultType]::ParameterName, 'Do not verify the server''s TLS certificate (testing only)')
            [CompletionResult]::new('--cluster', '--cluster', [CompletionResultType]::ParameterName, 'Use the Redis Cluster client (also implied by a redis+cluster:// or rediss+cluster:// URL)')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print one JSON document instead of text (stable shape, see README)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'anarchon;list' {
            [CompletionResult]::new('--pattern', '--pattern', [CompletionResultType]::ParameterName, 'Only jobs whose name matches this Redis glob (`*`, `?`, `[abc]`)')
            [CompletionResult]::new('--strategy', '--strategy', [CompletionResultType]::ParameterName, 'Only jobs of this strategy''s layout: lease, or any claim-only one [default: both layouts]')
            [CompletionResult]::new('--status', '--status', [CompletionResultType]::ParameterName, 'Only jobs whose newest run is in this state (`expired`: marked running, lease ended)')
            [CompletionResult]::new('--sort', '--sort', [CompletionResultType]::ParameterName, 'Order of the rows')
            [CompletionResult]::new('--interval', '--interval', [CompletionResultType]::ParameterName, 'How often --watch (and history --follow) reads the store again')
            [CompletionResult]::new('--redis', '--redis', [CompletionResultType]::ParameterName, 'Redis or Valkey URL: redis://[user:password@]host:port[/db], rediss:// for TLS, redis+cluster:// for Redis Cluster, redis+sentinel://host:port[,host:port]/<master>[/db] to ask Sentinel for the current primary (after a failover, the new one)')
            [CompletionResult]::new('--host', '--host', [CompletionResultType]::ParameterName, 'Host to connect to, instead of a URL [default: localhost]. --host, --port and --db, like redis-cli''s, win over $ANARCHON_REDIS_URL and $REDIS_URL')
            [CompletionResult]::new('-p', '-p', [CompletionResultType]::ParameterName, 'Port [default: 6379]; alone, on localhost')
            [CompletionResult]::new('--port', '--port', [CompletionResultType]::ParameterName, 'Port [default: 6379]; alone, on localhost')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Database number [default: 0]')
            [CompletionResult]::new('--db', '--db', [CompletionResultType]::ParameterName, 'Database number [default: 0]')
            [CompletionResult]::new('--user', '--user', [CompletionResultType]::ParameterName, 'ACL user name (on any URL or --host)')
            [CompletionResult]::new('--password-file', '--password-file', [CompletionResultType]::ParameterName, 'Read the password from the first line of this file (else $ANARCHON_REDIS_PASSWORD). Used when the URL carries none. Never printed')
            [CompletionResult]::new('--tls-ca', '--tls-ca', [CompletionResultType]::ParameterName, 'Trust this PEM CA bundle for TLS instead of the system''s')
            [CompletionResult]::new('--prefix', '--prefix', [CompletionResultType]::ParameterName, 'Prefix of every key, as the scheduler''s `prefix` option')
            [CompletionResult]::new('--backend', '--backend', [CompletionResultType]::ParameterName, 'redis, or valkey: the Valkey flavour, which refuses the idmp strategy')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to use colour: auto (a terminal without NO_COLOR), always, never')
            [CompletionResult]::new('--connect-timeout', '--connect-timeout', [CompletionResultType]::ParameterName, 'Give up connecting after this long')
            [CompletionResult]::new('--command-timeout', '--command-timeout', [CompletionResultType]::ParameterName, 'Give up waiting for one reply after this long')
            [CompletionResult]::new('--active', '--active', [CompletionResultType]::ParameterName, 'List every run in progress across the jobs instead: job, slot, attempt, runner, running for, lease left (or expired)')
            [CompletionResult]::new('-w', '-w', [CompletionResultType]::ParameterName, 'Show it again every --interval until interrupted: redrawn in place on a terminal, repeated below a time line when piped')
            [CompletionResult]::new('--watch', '--watch', [CompletionResultType]::ParameterName, 'Show it again every --interval until interrupted: redrawn in place on a terminal, repeated below a time line when piped')
            [CompletionResult]::new('--tls', '--tls', [CompletionResultType]::ParameterName, 'Connect with TLS (as a rediss:// URL does), with --host or --port')
            [CompletionResult]::new('--tls-insecure', '--tls-insecure', [CompletionResultType]::ParameterName, 'Do not verify the server''s TLS certificate (testing only)')
            [CompletionResult]::new('--cluster', '--cluster', [CompletionResultType]::ParameterName, 'Use the Redis Cluster client (also implied by a redis+cluster:// or rediss+cluster:// URL)')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print one JSON document instead of text (stable shape, see README)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'anarchon;inspect' {
            [CompletionResult]::new('--strategy', '--strategy', [CompletionResultType]::ParameterName, 'Which layout to read: lease, or a claim-only strategy [default: whichever exists]')
            [CompletionResult]::new('--last', '--last', [CompletionResultType]::ParameterName, 'How many of the newest runs to show')
            [CompletionResult]::new('--interval', '--interval', [CompletionResultType]::ParameterName, 'How often --watch (and history --follow) reads the store again')
            [CompletionResult]::new('--redis', '--redis', [CompletionResultType]::ParameterName, 'Redis or Valkey URL: redis://[user:password@]host:port[/db], rediss:// for TLS, redis+cluster:// for Redis Cluster, redis+sentinel://host:port[,host:port]/<master>[/db] to ask Sentinel for the current primary (after a failover, the new one)')
            [CompletionResult]::new('--host', '--host', [CompletionResultType]::ParameterName, 'Host to connect to, instead of a URL [default: localhost]. --host, --port and --db, like redis-cli''s, win over $ANARCHON_REDIS_URL and $REDIS_URL')
            [CompletionResult]::new('-p', '-p', [CompletionResultType]::ParameterName, 'Port [default: 6379]; alone, on localhost')
            [CompletionResult]::new('--port', '--port', [CompletionResultType]::ParameterName, 'Port [default: 6379]; alone, on localhost')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Database number [default: 0]')
            [CompletionResult]::new('--db', '--db', [CompletionResultType]::ParameterName, 'Database number [default: 0]')
            [CompletionResult]::new('--user', '--user', [CompletionResultType]::ParameterName, 'ACL user name (on any URL or --host)')
            [CompletionResult]::new('--password-file', '--password-file', [CompletionResultType]::ParameterName, 'Read the password from the first line of this file (else $ANARCHON_REDIS_PASSWORD). Used when the URL carries none. Never printed')
            [CompletionResult]::new('--tls-ca', '--tls-ca', [CompletionResultType]::ParameterName, 'Trust this PEM CA bundle for TLS instead of the system''s')
            [CompletionResult]::new('--prefix', '--prefix', [CompletionResultType]::ParameterName, 'Prefix of every key, as the scheduler''s `prefix` option')
            [CompletionResult]::new('--backend', '--backend', [CompletionResultType]::ParameterName, 'redis, or valkey: the Valkey flavour, which refuses the idmp strategy')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to use colour: auto (a terminal without NO_COLOR), always, never')
            [CompletionResult]::new('--connect-timeout', '--connect-timeout', [CompletionResultType]::ParameterName, 'Give up connecting after this long')
            [CompletionResult]::new('--command-timeout', '--command-timeout', [CompletionResultType]::ParameterName, 'Give up waiting for one reply after this long')
            [CompletionResult]::new('-w', '-w', [CompletionResultType]::ParameterName, 'Show it again every --interval until interrupted: redrawn in place on a terminal, repeated below a time line when piped')
            [CompletionResult]::new('--watch', '--watch', [CompletionResultType]::ParameterName, 'Show it again every --interval until interrupted: redrawn in place on a terminal, repeated below a time line when piped')
            [CompletionResult]::new('--tls', '--tls', [CompletionResultType]::ParameterName, 'Connect with TLS (as a rediss:// URL does), with --host or --port')
            [CompletionResult]::new('--tls-insecure', '--tls-insecure', [CompletionResultType]::ParameterName, 'Do not verify the server''s TLS certificate (testing only)')
            [CompletionResult]::new('--cluster', '--cluster', [CompletionResultType]::ParameterName, 'Use the Redis Cluster client (also implied by a redis+cluster:// or rediss+cluster:// URL)')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print one JSON document instead of text (stable shape, see README)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'anarchon;history' {
            [CompletionResult]::new('--strategy', '--strategy', [CompletionResultType]::ParameterName, 'Which layout to read: lease, or a claim-only strategy [default: whichever exists]')
            [CompletionResult]::new('--since', '--since', [CompletionResultType]::ParameterName, 'Only runs whose slot is at or after this: a duration ago (6h) or a time (RFC 3339, ms)')
            [CompletionResult]::new('--status', '--status', [CompletionResultType]::ParameterName, 'Only attempts with this status')
            [CompletionResult]::new('--last', '--last', [CompletionResultType]::ParameterName, 'At most this many entries')
            [CompletionResult]::new('--interval', '--interval', [CompletionResultType]::ParameterName, 'How often --watch (and history --follow) reads the store again')
            [CompletionResult]::new('--redis', '--redis', [CompletionResultType]::ParameterName, 'Redis or Valkey URL: redis://[user:password@]host:port[/db], rediss:// for TLS, redis+cluster:// for Redis Cluster, redis+sentinel://host:port[,host:port]/<master>[/db] to ask Sentinel for the current primary (after a failover, the new one)')
            [CompletionResult]::new('--host', '--host', [CompletionResultType]::ParameterName, 'Host to connect to, instead of a URL [default: localhost]. --host, --port and --db, like redis-cli''s, win over $ANARCHON_REDIS_URL and $REDIS_URL')
            [CompletionResult]::new('-p', '-p', [CompletionResultType]::ParameterName, 'Port [default: 6379]; alone, on localhost')
            [CompletionResult]::new('--port', '--port', [CompletionResultType]::ParameterName, 'Port [default: 6379]; alone, on localhost')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Database number [default: 0]')
            [CompletionResult]::new('--db', '--db', [CompletionResultType]::ParameterName, 'Database number [default: 0]')
            [CompletionResult]::new('--user', '--user', [CompletionResultType]::ParameterName, 'ACL user name (on any URL or --host)')
            [CompletionResult]::new('--password-file', '--password-file', [CompletionResultType]::ParameterName, 'Read the password from the first line of this file (else $ANARCHON_REDIS_PASSWORD). Used when the URL carries none. Never printed')
            [CompletionResult]::new('--tls-ca', '--tls-ca', [CompletionResultType]::ParameterName, 'Trust this PEM CA bundle for TLS instead of the system''s')
            [CompletionResult]::new('--prefix', '--prefix', [CompletionResultType]::ParameterName, 'Prefix of every key, as the scheduler''s `prefix` option')
            [CompletionResult]::new('--backend', '--backend', [CompletionResultType]::ParameterName, 'redis, or valkey: the Valkey flavour, which refuses the idmp strategy')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to use colour: auto (a terminal without NO_COLOR), always, never')
            [CompletionResult]::new('--connect-timeout', '--connect-timeout', [CompletionResultType]::ParameterName, 'Give up connecting after this long')
            [CompletionResult]::new('--command-timeout', '--command-timeout', [CompletionResultType]::ParameterName, 'Give up waiting for one reply after this long')
            [CompletionResult]::new('--all', '--all', [CompletionResultType]::ParameterName, 'With --follow: every job under the prefix (jobs that appear later too)')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Add a column with the first line each attempt left on stderr (or why it ended)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Add a column with the first line each attempt left on stderr (or why it ended)')
            [CompletionResult]::new('-f', '-f', [CompletionResultType]::ParameterName, 'Then print each attempt as it ends, until interrupted (like `tail -f`; the store is read every --interval)')
            [CompletionResult]::new('--follow', '--follow', [CompletionResultType]::ParameterName, 'Then print each attempt as it ends, until interrupted (like `tail -f`; the store is read every --interval)')
            [CompletionResult]::new('-w', '-w', [CompletionResultType]::ParameterName, 'Show it again every --interval until interrupted: redrawn in place on a terminal, repeated below a time line when piped')
            [CompletionResult]::new('--watch', '--watch', [CompletionResultType]::ParameterName, 'Show it again every --interval until interrupted: redrawn in place on a terminal, repeated below a time line when piped')
            [CompletionResult]::new('--tls', '--tls', [CompletionResultType]::ParameterName, 'Connect with TLS (as a rediss:// URL does), with --host or --port')
            [CompletionResult]::new('--tls-insecure', '--tls-insecure', [CompletionResultType]::ParameterName, 'Do not verify the server''s TLS certificate (testing only)')
            [CompletionResult]::new('--cluster', '--cluster', [CompletionResultType]::ParameterName, 'Use the Redis Cluster client (also implied by a redis+cluster:// or rediss+cluster:// URL)')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print one JSON document instead of text (stable shape, see README)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'anarchon;logs' {
            [CompletionResult]::new('--strategy', '--strategy', [CompletionResultType]::ParameterName, 'Which layout to read: lease, or a claim-only strategy [default: whichever exists]')
            [CompletionResult]::new('--slot', '--slot', [CompletionResultType]::ParameterName, 'Every ended attempt of this run')
            [CompletionResult]::new('--last', '--last', [CompletionResultType]::ParameterName, 'The newest N ended attempts, whatever their status')
            [CompletionResult]::new('--redis', '--redis', [CompletionResultType]::ParameterName, 'Redis or Valkey URL: redis://[user:password@]host:port[/db], rediss:// for TLS, redis+cluster:// for Redis Cluster, redis+sentinel://host:port[,host:port]/<master>[/db] to ask Sentinel for the current primary (after a failover, the new one)')
            [CompletionResult]::new('--host', '--host', [CompletionResultType]::ParameterName, 'Host to connect to, instead of a URL [default: localhost]. --host, --port and --db, like redis-cli''s, win over $ANARCHON_REDIS_URL and $REDIS_URL')
            [CompletionResult]::new('-p', '-p', [CompletionResultType]::ParameterName, 'Port [default: 6379]; alone, on localhost')
            [CompletionResult]::new('--port', '--port', [CompletionResultType]::ParameterName, 'Port [default: 6379]; alone, on localhost')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Database number [default: 0]')
            [CompletionResult]::new('--db', '--db', [CompletionResultType]::ParameterName, 'Database number [default: 0]')
            [CompletionResult]::new('--user', '--user', [CompletionResultType]::ParameterName, 'ACL user name (on any URL or --host)')
            [CompletionResult]::new('--password-file', '--password-file', [CompletionResultType]::ParameterName, 'Read the password from the first line of this file (else $ANARCHON_REDIS_PASSWORD). Used when the URL carries none. Never printed')
            [CompletionResult]::new('--tls-ca', '--tls-ca', [CompletionResultType]::ParameterName, 'Trust this PEM CA bundle for TLS instead of the system''s')
            [CompletionResult]::new('--prefix', '--prefix', [CompletionResultType]::ParameterName, 'Prefix of every key, as the scheduler''s `prefix` option')
            [CompletionResult]::new('--backend', '--backend', [CompletionResultType]::ParameterName, 'redis, or valkey: the Valkey flavour, which refuses the idmp strategy')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to use colour: auto (a terminal without NO_COLOR), always, never')
            [CompletionResult]::new('--connect-timeout', '--connect-timeout', [CompletionResultType]::ParameterName, 'Give up connecting after this long')
            [CompletionResult]::new('--command-timeout', '--command-timeout', [CompletionResultType]::ParameterName, 'Give up waiting for one reply after this long')
            [CompletionResult]::new('--tls', '--tls', [CompletionResultType]::ParameterName, 'Connect with TLS (as a rediss:// URL does), with --host or --port')
            [CompletionResult]::new('--tls-insecure', '--tls-insecure', [CompletionResultType]::ParameterName, 'Do not verify the server''s TLS certificate (testing only)')
            [CompletionResult]::new('--cluster', '--cluster', [CompletionResultType]::ParameterName, 'Use the Redis Cluster client (also implied by a redis+cluster:// or rediss+cluster:// URL)')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print one JSON document instead of text (stable shape, see README)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'anarchon;trim' {
            [CompletionResult]::new('--strategy', '--strategy', [CompletionResultType]::ParameterName, 'Which layout to trim for JOB: lease, or a claim-only strategy [default: whichever exists]')
            [CompletionResult]::new('--keep', '--keep', [CompletionResultType]::ParameterName, 'Keep about this many runs per job (the scheduler''s historySize)')
            [CompletionResult]::new('--older-than', '--older-than', [CompletionResultType]::ParameterName, 'Also remove runs whose slot is older than this')
            [CompletionResult]::new('--protect', '--protect', [CompletionResultType]::ParameterName, 'Never remove a run younger than this: a late claim could still ask for it [default: what the job''s claimants recorded (max-late + catch-up + lease x attempts), or 24h when the store does not know; 1h for claim-only jobs]. Shorter than the recorded need is refused')
            [CompletionResult]::new('--redis', '--redis', [CompletionResultType]::ParameterName, 'Redis or Valkey URL: redis://[user:password@]host:port[/db], rediss:// for TLS, redis+cluster:// for Redis Cluster, redis+sentinel://host:port[,host:port]/<master>[/db] to ask Sentinel for the current primary (after a failover, the new one)')
            [CompletionResult]::new('--host', '--host', [CompletionResultType]::ParameterName, 'Host to connect to, instead of a URL [default: localhost]. --host, --port and --db, like redis-cli''s, win over $ANARCHON_REDIS_URL and $REDIS_URL')
            [CompletionResult]::new('-p', '-p', [CompletionResultType]::ParameterName, 'Port [default: 6379]; alone, on localhost')
            [CompletionResult]::new('--port', '--port', [CompletionResultType]::ParameterName, 'Port [default: 6379]; alone, on localhost')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Database number [default: 0]')
            [CompletionResult]::new('--db', '--db', [CompletionResultType]::ParameterName, 'Database number [default: 0]')
            [CompletionResult]::new('--user', '--user', [CompletionResultType]::ParameterName, 'ACL user name (on any URL or --host)')
            [CompletionResult]::new('--password-file', '--password-file', [CompletionResultType]::ParameterName, 'Read the password from the first line of this file (else $ANARCHON_REDIS_PASSWORD). Used when the URL carries none. Never printed')
            [CompletionResult]::new('--tls-ca', '--tls-ca', [CompletionResultType]::ParameterName, 'Trust this PEM CA bundle for TLS instead of the system''s')
            [CompletionResult]::new('--prefix', '--prefix', [CompletionResultType]::ParameterName, 'Prefix of every key, as the scheduler''s `prefix` option')
            [CompletionResult]::new('--backend', '--backend', [CompletionResultType]::ParameterName, 'redis, or valkey: the Valkey flavour, which refuses the idmp strategy')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to use colour: auto (a terminal without NO_COLOR), always, never')
            [CompletionResult]::new('--connect-timeout', '--connect-timeout', [CompletionResultType]::ParameterName, 'Give up connecting after this long')
            [CompletionResult]::new('--command-timeout', '--command-timeout', [CompletionResultType]::ParameterName, 'Give up waiting for one reply after this long')
            [CompletionResult]::new('--all', '--all', [CompletionResultType]::ParameterName, 'Trim every job under the prefix (both layouts)')
            [CompletionResult]::new('--dry-run', '--dry-run', [CompletionResultType]::ParameterName, 'Only report what would be removed')
            [CompletionResult]::new('-y', '-y', [CompletionResultType]::ParameterName, 'Do not ask for confirmation (needed when stdin is not a terminal)')
            [CompletionResult]::new('--yes', '--yes', [CompletionResultType]::ParameterName, 'Do not ask for confirmation (needed when stdin is not a terminal)')
            [CompletionResult]::new('--tls', '--tls', [CompletionResultType]::ParameterName, 'Connect with TLS (as a rediss:// URL does), with --host or --port')
            [CompletionResult]::new('--tls-insecure', '--tls-insecure', [CompletionResultType]::ParameterName, 'Do not verify the server''s TLS certificate (testing only)')
            [CompletionResult]::new('--cluster', '--cluster', [CompletionResultType]::ParameterName, 'Use the Redis Cluster client (also implied by a redis+cluster:// or rediss+cluster:// URL)')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print one JSON document instead of text (stable shape, see README)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'anarchon;release' {
            [CompletionResult]::new('--slot', '--slot', [CompletionResultType]::ParameterName, 'The run to release [default: the job''s one run in progress]')
            [CompletionResult]::new('--expired', '--expired', [CompletionResultType]::ParameterName, 'Release only runs whose lease expired more than DURATION ago (every such run of the job, or of every job with --all): holders that died with nobody standing by')
            [CompletionResult]::new('--status', '--status', [CompletionResultType]::ParameterName, 'How the released attempt is recorded')
            [CompletionResult]::new('--reason', '--reason', [CompletionResultType]::ParameterName, 'Why, recorded with the attempt (an incident number, a sentence)')
            [CompletionResult]::new('--by', '--by', [CompletionResultType]::ParameterName, 'Who releases, recorded with the attempt [default: $USER@host:pid]')
            [CompletionResult]::new('--redis', '--redis', [CompletionResultType]::ParameterName, 'Redis or Valkey URL: redis://[user:password@]host:port[/db], rediss:// for TLS, redis+cluster:// for Redis Cluster, redis+sentinel://host:port[,host:port]/<master>[/db] to ask Sentinel for the current primary (after a failover, the new one)')
            [CompletionResult]::new('--host', '--host', [CompletionResultType]::ParameterName, 'Host to connect to, instead of a URL [default: localhost]. --host, --port and --db, like redis-cli''s, win over $ANARCHON_REDIS_URL and $REDIS_URL')
            [CompletionResult]::new('-p', '-p', [CompletionResultType]::ParameterName, 'Port [default: 6379]; alone, on localhost')
            [CompletionResult]::new('--port', '--port', [CompletionResultType]::ParameterName, 'Port [default: 6379]; alone, on localhost')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Database number [default: 0]')
            [CompletionResult]::new('--db', '--db', [CompletionResultType]::ParameterName, 'Database number [default: 0]')
            [CompletionResult]::new('--user', '--user', [CompletionResultType]::ParameterName, 'ACL user name (on any URL or --host)')
            [CompletionResult]::new('--password-file', '--password-file', [CompletionResultType]::ParameterName, 'Read the password from the first line of this file (else $ANARCHON_REDIS_PASSWORD). Used when the URL carries none. Never printed')
            [CompletionResult]::new('--tls-ca', '--tls-ca', [CompletionResultType]::ParameterName, 'Trust this PEM CA bundle for TLS instead of the system''s')
            [CompletionResult]::new('--prefix', '--prefix', [CompletionResultType]::ParameterName, 'Prefix of every key, as the scheduler''s `prefix` option')
            [CompletionResult]::new('--backend', '--backend', [CompletionResultType]::ParameterName, 'redis, or valkey: the Valkey flavour, which refuses the idmp strategy')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to use colour: auto (a terminal without NO_COLOR), always, never')
            [CompletionResult]::new('--connect-timeout', '--connect-timeout', [CompletionResultType]::ParameterName, 'Give up connecting after this long')
            [CompletionResult]::new('--command-timeout', '--command-timeout', [CompletionResultType]::ParameterName, 'Give up waiting for one reply after this long')
            [CompletionResult]::new('--all', '--all', [CompletionResultType]::ParameterName, 'Every lease job (with --expired)')
            [CompletionResult]::new('--dry-run', '--dry-run', [CompletionResultType]::ParameterName, 'Only show what would be released')
            [CompletionResult]::new('-y', '-y', [CompletionResultType]::ParameterName, 'Do not ask for confirmation (needed when stdin is not a terminal)')
            [CompletionResult]::new('--yes', '--yes', [CompletionResultType]::ParameterName, 'Do not ask for confirmation (needed when stdin is not a terminal)')
            [CompletionResult]::new('--tls', '--tls', [CompletionResultType]::ParameterName, 'Connect with TLS (as a rediss:// URL does), with --host or --port')
            [CompletionResult]::new('--tls-insecure', '--tls-insecure', [CompletionResultType]::ParameterName, 'Do not verify the server''s TLS certificate (testing only)')
            [CompletionResult]::new('--cluster', '--cluster', [CompletionResultType]::ParameterName, 'Use the Redis Cluster client (also implied by a redis+cluster:// or rediss+cluster:// URL)')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print one JSON document instead of text (stable shape, see README)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'anarchon;pause' {
            [CompletionResult]::new('--until', '--until', [CompletionResultType]::ParameterName, 'Until this time (RFC 3339, or ms since the epoch) [default: until `resume`]')
            [CompletionResult]::new('--for', '--for', [CompletionResultType]::ParameterName, 'For this long from now, by the server''s clock')
            [CompletionResult]::new('--reason', '--reason', [CompletionResultType]::ParameterName, 'Why, shown by `list` and `inspect`')
            [CompletionResult]::new('--by', '--by', [CompletionResultType]::ParameterName, 'Who pauses [default: $USER@host:pid]')
            [CompletionResult]::new('--redis', '--redis', [CompletionResultType]::ParameterName, 'Redis or Valkey URL: redis://[user:password@]host:port[/db], rediss:// for TLS, redis+cluster:// for Redis Cluster, redis+sentinel://host:port[,host:port]/<master>[/db] to ask Sentinel for the current primary (after a failover, the new one)')
            [CompletionResult]::new('--host', '--host', [CompletionResultType]::ParameterName, 'Host to connect to, instead of a URL [default: localhost]. --host, --port and --db, like redis-cli''s, win over $ANARCHON_REDIS_URL and $REDIS_URL')
            [CompletionResult]::new('-p', '-p', [CompletionResultType]::ParameterName, 'Port [default: 6379]; alone, on localhost')
            [CompletionResult]::new('--port', '--port', [CompletionResultType]::ParameterName, 'Port [default: 6379]; alone, on localhost')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Database number [default: 0]')
            [CompletionResult]::new('--db', '--db', [CompletionResultType]::ParameterName, 'Database number [default: 0]')
            [CompletionResult]::new('--user', '--user', [CompletionResultType]::ParameterName, 'ACL user name (on any URL or --host)')
            [CompletionResult]::new('--password-file', '--password-file', [CompletionResultType]::ParameterName, 'Read the password from the first line of this file (else $ANARCHON_REDIS_PASSWORD). Used when the URL carries none. Never printed')
            [CompletionResult]::new('--tls-ca', '--tls-ca', [CompletionResultType]::ParameterName, 'Trust this PEM CA bundle for TLS instead of the system''s')
            [CompletionResult]::new('--prefix', '--prefix', [CompletionResultType]::ParameterName, 'Prefix of every key, as the scheduler''s `prefix` option')
            [CompletionResult]::new('--backend', '--backend', [CompletionResultType]::ParameterName, 'redis, or valkey: the Valkey flavour, which refuses the idmp strategy')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to use colour: auto (a terminal without NO_COLOR), always, never')
            [CompletionResult]::new('--connect-timeout', '--connect-timeout', [CompletionResultType]::ParameterName, 'Give up connecting after this long')
            [CompletionResult]::new('--command-timeout', '--command-timeout', [CompletionResultType]::ParameterName, 'Give up waiting for one reply after this long')
            [CompletionResult]::new('--tls', '--tls', [CompletionResultType]::ParameterName, 'Connect with TLS (as a rediss:// URL does), with --host or --port')
            [CompletionResult]::new('--tls-insecure', '--tls-insecure', [CompletionResultType]::ParameterName, 'Do not verify the server''s TLS certificate (testing only)')
            [CompletionResult]::new('--cluster', '--cluster', [CompletionResultType]::ParameterName, 'Use the Redis Cluster client (also implied by a redis+cluster:// or rediss+cluster:// URL)')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print one JSON document instead of text (stable shape, see README)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'anarchon;resume' {
            [CompletionResult]::new('--redis', '--redis', [CompletionResultType]::ParameterName, 'Redis or Valkey URL: redis://[user:password@]host:port[/db], rediss:// for TLS, redis+cluster:// for Redis Cluster, redis+sentinel://host:port[,host:port]/<master>[/db] to ask Sentinel for the current primary (after a failover, the new one)')
            [CompletionResult]::new('--host', '--host', [CompletionResultType]::ParameterName, 'Host to connect to, instead of a URL [default: localhost]. --host, --port and --db, like redis-cli''s, win over $ANARCHON_REDIS_URL and $REDIS_URL')
            [CompletionResult]::new('-p', '-p', [CompletionResultType]::ParameterName, 'Port [default: 6379]; alone, on localhost')
            [CompletionResult]::new('--port', '--port', [CompletionResultType]::ParameterName, 'Port [default: 6379]; alone, on localhost')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Database number [default: 0]')
            [CompletionResult]::new('--db', '--db', [CompletionResultType]::ParameterName, 'Database number [default: 0]')
            [CompletionResult]::new('--user', '--user', [CompletionResultType]::ParameterName, 'ACL user name (on any URL or --host)')
            [CompletionResult]::new('--password-file', '--password-file', [CompletionResultType]::ParameterName, 'Read the password from the first line of this file (else $ANARCHON_REDIS_PASSWORD). Used when the URL carries none. Never printed')
            [CompletionResult]::new('--tls-ca', '--tls-ca', [CompletionResultType]::ParameterName, 'Trust this PEM CA bundle for TLS instead of the system''s')
            [CompletionResult]::new('--prefix', '--prefix', [CompletionResultType]::ParameterName, 'Prefix of every key, as the scheduler''s `prefix` option')
            [CompletionResult]::new('--backend', '--backend', [CompletionResultType]::ParameterName, 'redis, or valkey: the Valkey flavour, which refuses the idmp strategy')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to use colour: auto (a terminal without NO_COLOR), always, never')
            [CompletionResult]::new('--connect-timeout', '--connect-timeout', [CompletionResultType]::ParameterName, 'Give up connecting after this long')
            [CompletionResult]::new('--command-timeout', '--command-timeout', [CompletionResultType]::ParameterName, 'Give up waiting for one reply after this long')
            [CompletionResult]::new('--tls', '--tls', [CompletionResultType]::ParameterName, 'Connect with TLS (as a rediss:// URL does), with --host or --port')
            [CompletionResult]::new('--tls-insecure', '--tls-insecure', [CompletionResultType]::ParameterName, 'Do not verify the server''s TLS certificate (testing only)')
            [CompletionResult]::new('--cluster', '--cluster', [CompletionResultType]::ParameterName, 'Use the Redis Cluster client (also implied by a redis+cluster:// or rediss+cluster:// URL)')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print one JSON document instead of text (stable shape, see README)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'anarchon;migrate' {
            [CompletionResult]::new('--redis', '--redis', [CompletionResultType]::ParameterName, 'Redis or Valkey URL: redis://[user:password@]host:port[/db], rediss:// for TLS, redis+cluster:// for Redis Cluster, redis+sentinel://host:port[,host:port]/<master>[/db] to ask Sentinel for the current primary (after a failover, the new one)')
            [CompletionResult]::new('--host', '--host', [CompletionResultType]::ParameterName, 'Host to connect to, instead of a URL [default: localhost]. --host, --port and --db, like redis-cli''s, win over $ANARCHON_REDIS_URL and $REDIS_URL')
            [CompletionResult]::new('-p', '-p', [CompletionResultType]::ParameterName, 'Port [default: 6379]; alone, on localhost')
            [CompletionResult]::new('--port', '--port', [CompletionResultType]::ParameterName, 'Port [default: 6379]; alone, on localhost')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Database number [default: 0]')
            [CompletionResult]::new('--db', '--db', [CompletionResultType]::ParameterName, 'Database number [default: 0]')
            [CompletionResult]::new('--user', '--user', [CompletionResultType]::ParameterName, 'ACL user name (on any URL or --host)')
            [CompletionResult]::new('--password-file', '--password-file', [CompletionResultType]::ParameterName, 'Read the password from the first line of this file (else $ANARCHON_REDIS_PASSWORD). Used when the URL carries none. Never printed')
            [CompletionResult]::new('--tls-ca', '--tls-ca', [CompletionResultType]::ParameterName, 'Trust this PEM CA bundle for TLS instead of the system''s')
            [CompletionResult]::new('--prefix', '--prefix', [CompletionResultType]::ParameterName, 'Prefix of every key, as the scheduler''s `prefix` option')
            [CompletionResult]::new('--backend', '--backend', [CompletionResultType]::ParameterName, 'redis, or valkey: the Valkey flavour, which refuses the idmp strategy')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to use colour: auto (a terminal without NO_COLOR), always, never')
            [CompletionResult]::new('--connect-timeout', '--connect-timeout', [CompletionResultType]::ParameterName, 'Give up connecting after this long')
            [CompletionResult]::new('--command-timeout', '--command-timeout', [CompletionResultType]::ParameterName, 'Give up waiting for one reply after this long')
            [CompletionResult]::new('--dry-run', '--dry-run', [CompletionResultType]::ParameterName, 'Only report what would change')
            [CompletionResult]::new('-y', '-y', [CompletionResultType]::ParameterName, 'Do not ask for confirmation (needed when stdin is not a terminal)')
            [CompletionResult]::new('--yes', '--yes', [CompletionResultType]::ParameterName, 'Do not ask for confirmation (needed when stdin is not a terminal)')
            [CompletionResult]::new('--tls', '--tls', [CompletionResultType]::ParameterName, 'Connect with TLS (as a rediss:// URL does), with --host or --port')
            [CompletionResult]::new('--tls-insecure', '--tls-insecure', [CompletionResultType]::ParameterName, 'Do not verify the server''s TLS certificate (testing only)')
            [CompletionResult]::new('--cluster', '--cluster', [CompletionResultType]::ParameterName, 'Use the Redis Cluster client (also implied by a redis+cluster:// or rediss+cluster:// URL)')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print one JSON document instead of text (stable shape, see README)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'anarchon;run-now' {
            [CompletionResult]::new('--strategy', '--strategy', [CompletionResultType]::ParameterName, 'lease (default): leases, backups, overlap protection, retries. stream-id, idmp, script: claim-only strategies that only decide who runs (see README)')
            [CompletionResult]::new('--window', '--window', [CompletionResultType]::ParameterName, 'script strategy: how long a claimed run is remembered; must exceed --max-late [default: 5m]')
            [CompletionResult]::new('--idmp-duration', '--idmp-duration', [CompletionResultType]::ParameterName, 'idmp strategy: seconds Redis remembers a run''s idempotency ID (1..86400) [default: 300]')
            [CompletionResult]::new('--idmp-max-size', '--idmp-max-size', [CompletionResultType]::ParameterName, 'idmp strategy: run IDs Redis keeps per job (1..10000) [default: 1000]')
            [CompletionResult]::new('--lease', '--lease', [CompletionResultType]::ParameterName, 'How long a claim holds the run without a heartbeat [default: 30s]')
            [CompletionResult]::new('--max-attempts', '--max-attempts', [CompletionResultType]::ParameterName, 'Attempts in all: after a holder''s lease expires, a new claim takes attempt+1 until this many [default: 3]')
            [CompletionResult]::new('--overlap', '--overlap', [CompletionResultType]::ParameterName, 'forbid: answer overlap while an older run of the job holds a live lease; allow: do not check [default: forbid]')
            [CompletionResult]::new('--runner', '--runner', [CompletionResultType]::ParameterName, 'Who is claiming, recorded in the run (default host:pid)')
            [CompletionResult]::new('--history-size', '--history-size', [CompletionResultType]::ParameterName, 'Keep about this many runs of history per job (the scheduler''s historySize) [default: 1000]')
            [CompletionResult]::new('--history-ttl', '--history-ttl', [CompletionResultType]::ParameterName, 'Also drop history older than this (the scheduler''s historyTtlMs)')
            [CompletionResult]::new('--heartbeat', '--heartbeat', [CompletionResultType]::ParameterName, 'Heartbeat interval while the command runs (default: a third of --lease)')
            [CompletionResult]::new('--on-lease-lost', '--on-lease-lost', [CompletionResultType]::ParameterName, 'What to do with the command when the lease is lost: terminate it, or let it continue [default: terminate]')
            [CompletionResult]::new('--kill-after', '--kill-after', [CompletionResultType]::ParameterName, 'Grace between SIGTERM and SIGKILL when anarchon stops the command')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'Stop the command after this long and record it as failed (exit 124)')
            [CompletionResult]::new('--redis', '--redis', [CompletionResultType]::ParameterName, 'Redis or Valkey URL: redis://[user:password@]host:port[/db], rediss:// for TLS, redis+cluster:// for Redis Cluster, redis+sentinel://host:port[,host:port]/<master>[/db] to ask Sentinel for the current primary (after a failover, the new one)')
            [CompletionResult]::new('--host', '--host', [CompletionResultType]::ParameterName, 'Host to connect to, instead of a URL [default: localhost]. --host, --port and --db, like redis-cli''s, win over $ANARCHON_REDIS_URL and $REDIS_URL')
            [CompletionResult]::new('-p', '-p', [CompletionResultType]::ParameterName, 'Port [default: 6379]; alone, on localhost')
            [CompletionResult]::new('--port', '--port', [CompletionResultType]::ParameterName, 'Port [default: 6379]; alone, on localhost')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Database number [default: 0]')
            [CompletionResult]::new('--db', '--db', [CompletionResultType]::ParameterName, 'Database number [default: 0]')
            [CompletionResult]::new('--user', '--user', [CompletionResultType]::ParameterName, 'ACL user name (on any URL or --host)')
            [CompletionResult]::new('--password-file', '--password-file', [CompletionResultType]::ParameterName, 'Read the password from the first line of this file (else $ANARCHON_REDIS_PASSWORD). Used when the URL carries none. Never printed')
            [CompletionResult]::new('--tls-ca', '--tls-ca', [CompletionResultType]::ParameterName, 'Trust this PEM CA bundle for TLS instead of the system''s')
            [CompletionResult]::new('--prefix', '--prefix', [CompletionResultType]::ParameterName, 'Prefix of every key, as the scheduler''s `prefix` option')
            [CompletionResult]::new('--backend', '--backend', [CompletionResultType]::ParameterName, 'redis, or valkey: the Valkey flavour, which refuses the idmp strategy')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to use colour: auto (a terminal without NO_COLOR), always, never')
            [CompletionResult]::new('--connect-timeout', '--connect-timeout', [CompletionResultType]::ParameterName, 'Give up connecting after this long')
            [CompletionResult]::new('--command-timeout', '--command-timeout', [CompletionResultType]::ParameterName, 'Give up waiting for one reply after this long')
            [CompletionResult]::new('--new', '--new', [CompletionResultType]::ParameterName, 'Create the job if the store does not know it yet. Needed only on a terminal (a person''s typo must not create a job); scripts create jobs as they run them')
            [CompletionResult]::new('--shell', '--shell', [CompletionResultType]::ParameterName, 'Run the command line with /bin/sh -c (the words after -- joined by spaces)')
            [CompletionResult]::new('--foreground', '--foreground', [CompletionResultType]::ParameterName, 'Keep the command in anarchon''s process group, so it can read from the terminal (as `timeout --foreground`). Signals then reach the command alone, not its children')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'No progress or notes on stderr; errors and lost leases are still reported')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'No progress or notes on stderr; errors and lost leases are still reported')
            [CompletionResult]::new('--tls', '--tls', [CompletionResultType]::ParameterName, 'Connect with TLS (as a rediss:// URL does), with --host or --port')
            [CompletionResult]::new('--tls-insecure', '--tls-insecure', [CompletionResultType]::ParameterName, 'Do not verify the server''s TLS certificate (testing only)')
            [CompletionResult]::new('--cluster', '--cluster', [CompletionResultType]::ParameterName, 'Use the Redis Cluster client (also implied by a redis+cluster:// or rediss+cluster:// URL)')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print one JSON document instead of text (stable shape, see README)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'anarchon;doctor' {
            [CompletionResult]::new('--pings', '--pings', [CompletionResultType]::ParameterName, 'How many PINGs measure the latency')
            [CompletionResult]::new('--redis', '--redis', [CompletionResultType]::ParameterName, 'Redis or Valkey URL: redis://[user:password@]host:port[/db], rediss:// for TLS, redis+cluster:// for Redis Cluster, redis+sentinel://host:port[,host:port]/<master>[/db] to ask Sentinel for the current primary (after a failover, the new one)')
            [CompletionResult]::new('--host', '--host', [CompletionResultType]::ParameterName, 'Host to connect to, instead of a URL [default: localhost]. --host, --port and --db, like redis-cli''s, win over $ANARCHON_REDIS_URL and $REDIS_URL')
            [CompletionResult]::new('-p', '-p', [CompletionResultType]::ParameterName, 'Port [default: 6379]; alone, on localhost')
            [CompletionResult]::new('--port', '--port', [CompletionResultType]::ParameterName, 'Port [default: 6379]; alone, on localhost')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Database number [default: 0]')
            [CompletionResult]::new('--db', '--db', [CompletionResultType]::ParameterName, 'Database number [default: 0]')
            [CompletionResult]::new('--user', '--user', [CompletionResultType]::ParameterName, 'ACL user name (on any URL or --host)')
            [CompletionResult]::new('--password-file', '--password-file', [CompletionResultType]::ParameterName, 'Read the password from the first line of this file (else $ANARCHON_REDIS_PASSWORD). Used when the URL carries none. Never printed')
            [CompletionResult]::new('--tls-ca', '--tls-ca', [CompletionResultType]::ParameterName, 'Trust this PEM CA bundle for TLS instead of the system''s')
            [CompletionResult]::new('--prefix', '--prefix', [CompletionResultType]::ParameterName, 'Prefix of every key, as the scheduler''s `prefix` option')
            [CompletionResult]::new('--backend', '--backend', [CompletionResultType]::ParameterName, 'redis, or valkey: the Valkey flavour, which refuses the idmp strategy')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to use colour: auto (a terminal without NO_COLOR), always, never')
            [CompletionResult]::new('--connect-timeout', '--connect-timeout', [CompletionResultType]::ParameterName, 'Give up connecting after this long')
            [CompletionResult]::new('--command-timeout', '--command-timeout', [CompletionResultType]::ParameterName, 'Give up waiting for one reply after this long')
            [CompletionResult]::new('--tls', '--tls', [CompletionResultType]::ParameterName, 'Connect with TLS (as a rediss:// URL does), with --host or --port')
            [CompletionResult]::new('--tls-insecure', '--tls-insecure', [CompletionResultType]::ParameterName, 'Do not verify the server''s TLS certificate (testing only)')
            [CompletionResult]::new('--cluster', '--cluster', [CompletionResultType]::ParameterName, 'Use the Redis Cluster client (also implied by a redis+cluster:// or rediss+cluster:// URL)')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print one JSON document instead of text (stable shape, see README)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'anarchon;completions' {
            [CompletionResult]::new('--dir', '--dir', [CompletionResultType]::ParameterName, 'Write every shell''s completions into this directory instead')
            [CompletionResult]::new('--redis', '--redis', [CompletionResultType]::ParameterName, 'Redis or Valkey URL: redis://[user:password@]host:port[/db], rediss:// for TLS, redis+cluster:// for Redis Cluster, redis+sentinel://host:port[,host:port]/<master>[/db] to ask Sentinel for the current primary (after a failover, the new one)')
            [CompletionResult]::new('--host', '--host', [CompletionResultType]::ParameterName, 'Host to connect to, instead of a URL [default: localhost]. --host, --port and --db, like redis-cli''s, win over $ANARCHON_REDIS_URL and $REDIS_URL')
            [CompletionResult]::new('-p', '-p', [CompletionResultType]::ParameterName, 'Port [default: 6379]; alone, on localhost')
            [CompletionResult]::new('--port', '--port', [CompletionResultType]::ParameterName, 'Port [default: 6379]; alone, on localhost')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Database number [default: 0]')
            [CompletionResult]::new('--db', '--db', [CompletionResultType]::ParameterName, 'Database number [default: 0]')
            [CompletionResult]::new('--user', '--user', [CompletionResultType]::ParameterName, 'ACL user name (on any URL or --host)')
            [CompletionResult]::new('--password-file', '--password-file', [CompletionResultType]::ParameterName, 'Read the password from the first line of this file (else $ANARCHON_REDIS_PASSWORD). Used when the URL carries none. Never printed')
            [CompletionResult]::new('--tls-ca', '--tls-ca', [CompletionResultType]::ParameterName, 'Trust this PEM CA bundle for TLS instead of the system''s')
            [CompletionResult]::new('--prefix', '--prefix', [CompletionResultType]::ParameterName, 'Prefix of every key, as the scheduler''s `prefix` option')
            [CompletionResult]::new('--backend', '--backend', [CompletionResultType]::ParameterName, 'redis, or valkey: the Valkey flavour, which refuses the idmp strategy')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to use colour: auto (a terminal without NO_COLOR), always, never')
            [CompletionResult]::new('--connect-timeout', '--connect-timeout', [CompletionResultType]::ParameterName, 'Give up connecting after this long')
            [CompletionResult]::new('--command-timeout', '--command-timeout', [CompletionResultType]::ParameterName, 'Give up waiting for one reply after this long')
            [CompletionResult]::new('--install', '--install', [CompletionResultType]::ParameterName, 'Install SHELL''s completions where the shell finds them for this user (bash: $XDG_DATA_HOME/bash-completion/completions, zsh: $XDG_DATA_HOME/zsh/site-functions (add it to fpath), fish: $XDG_CONFIG_HOME/fish/completions), and say where')
            [CompletionResult]::new('--tls', '--tls', [CompletionResultType]::ParameterName, 'Connect with TLS (as a rediss:// URL does), with --host or --port')
            [CompletionResult]::new('--tls-insecure', '--tls-insecure', [CompletionResultType]::ParameterName, 'Do not verify the server''s TLS certificate (testing only)')
            [CompletionResult]::new('--cluster', '--cluster', [CompletionResultType]::ParameterName, 'Use the Redis Cluster client (also implied by a redis+cluster:// or rediss+cluster:// URL)')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print one JSON document instead of text (stable shape, see README)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'anarchon;man' {
            [CompletionResult]::new('--dir', '--dir', [CompletionResultType]::ParameterName, 'Write anarchon.1 and one page per command into this directory instead')
            [CompletionResult]::new('--redis', '--redis', [CompletionResultType]::ParameterName, 'Redis or Valkey URL: redis://[user:password@]host:port[/db], rediss:// for TLS, redis+cluster:// for Redis Cluster, redis+sentinel://host:port[,host:port]/<master>[/db] to ask Sentinel for the current primary (after a failover, the new one)')
            [CompletionResult]::new('--host', '--host', [CompletionResultType]::ParameterName, 'Host to connect to, instead of a URL [default: localhost]. --host, --port and --db, like redis-cli''s, win over $ANARCHON_REDIS_URL and $REDIS_URL')
            [CompletionResult]::new('-p', '-p', [CompletionResultType]::ParameterName, 'Port [default: 6379]; alone, on localhost')
            [CompletionResult]::new('--port', '--port', [CompletionResultType]::ParameterName, 'Port [default: 6379]; alone, on localhost')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Database number [default: 0]')
            [CompletionResult]::new('--db', '--db', [CompletionResultType]::ParameterName, 'Database number [default: 0]')
            [CompletionResult]::new('--user', '--user', [CompletionResultType]::ParameterName, 'ACL user name (on any URL or --host)')
            [CompletionResult]::new('--password-file', '--password-file', [CompletionResultType]::ParameterName, 'Read the password from the first line of this file (else $ANARCHON_REDIS_PASSWORD). Used when the URL carries none. Never printed')
            [CompletionResult]::new('--tls-ca', '--tls-ca', [CompletionResultType]::ParameterName, 'Trust this PEM CA bundle for TLS instead of the system''s')
            [CompletionResult]::new('--prefix', '--prefix', [CompletionResultType]::ParameterName, 'Prefix of every key, as the scheduler''s `prefix` option')
            [CompletionResult]::new('--backend', '--backend', [CompletionResultType]::ParameterName, 'redis, or valkey: the Valkey flavour, which refuses the idmp strategy')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to use colour: auto (a terminal without NO_COLOR), always, never')
            [CompletionResult]::new('--connect-timeout', '--connect-timeout', [CompletionResultType]::ParameterName, 'Give up connecting after this long')
            [CompletionResult]::new('--command-timeout', '--command-timeout', [CompletionResultType]::ParameterName, 'Give up waiting for one reply after this long')
            [CompletionResult]::new('--install', '--install', [CompletionResultType]::ParameterName, 'Install the pages where `man` finds them for this user ($XDG_DATA_HOME/man/man1), and say where')
            [CompletionResult]::new('--tls', '--tls', [CompletionResultType]::ParameterName, 'Connect with TLS (as a rediss:// URL does), with --host or --port')
            [CompletionResult]::new('--tls-insecure', '--tls-insecure', [CompletionResultType]::ParameterName, 'Do not verify the server''s TLS certificate (testing only)')
            [CompletionResult]::new('--cluster', '--cluster', [CompletionResultType]::ParameterName, 'Use the Redis Cluster client (also implied by a redis+cluster:// or rediss+cluster:// URL)')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print one JSON document instead of text (stable shape, see README)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'anarchon;help' {
            [CompletionResult]::new('claim', 'claim', [CompletionResultType]::ParameterValue, 'Claim one run of a job: exactly one caller wins it')
            [CompletionResult]::new('heartbeat', 'heartbeat', [CompletionResultType]::ParameterValue, 'Push the lease of a run you hold forward (only with the current attempt''s token)')
            [CompletionResult]::new('finish', 'finish', [CompletionResultType]::ParameterValue, 'End a run you hold as ok or failed, recording its result')
            [CompletionResult]::new('run', 'run', [CompletionResultType]::ParameterValue, 'Run a command for one scheduled run, on whichever host wins it (the crontab wrapper)')
            [CompletionResult]::new('list', 'list', [CompletionResultType]::ParameterValue, 'List every job under the prefix: layout, runs in progress, last run, last result, history')
            [CompletionResult]::new('inspect', 'inspect', [CompletionResultType]::ParameterValue, 'Show one job in full: runs in progress with their leases, recent runs and results, keys')
            [CompletionResult]::new('history', 'history', [CompletionResultType]::ParameterValue, 'Show a job''s attempts and results, newest first')
            [CompletionResult]::new('logs', 'logs', [CompletionResultType]::ParameterValue, 'Show what a job''s runs left behind: stderr tail, exit code or signal, timeout, duration')
            [CompletionResult]::new('trim', 'trim', [CompletionResultType]::ParameterValue, 'Trim a job''s history (or every job''s) with the scheduler''s rules')
            [CompletionResult]::new('release', 'release', [CompletionResultType]::ParameterValue, 'Break the lease of a run in progress, without its token (a hung or vanished holder)')
            [CompletionResult]::new('pause', 'pause', [CompletionResultType]::ParameterValue, 'Pause a job across the fleet: every host''s `run` skips it (exit 87) until `resume` or --until')
            [CompletionResult]::new('resume', 'resume', [CompletionResultType]::ParameterValue, 'End a job''s pause: its next scheduled run is claimed as usual')
            [CompletionResult]::new('migrate', 'migrate', [CompletionResultType]::ParameterValue, 'Convert the store to the newest format (format 1 to 2), safely while hosts claim')
            [CompletionResult]::new('run-now', 'run-now', [CompletionResultType]::ParameterValue, 'Start a manual run of a job now, with or without a command')
            [CompletionResult]::new('doctor', 'doctor', [CompletionResultType]::ParameterValue, 'Check the server: kind and version, strategies, mode, eviction, format, clock, latency')
            [CompletionResult]::new('completions', 'completions', [CompletionResultType]::ParameterValue, 'Print shell completions (bash, zsh, fish, powershell, elvish), or write them all to --dir')
            [CompletionResult]::new('man', 'man', [CompletionResultType]::ParameterValue, 'Print the man page, or write one per command to --dir')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'anarchon;help;claim' {
            break
        }
        'anarchon;help;heartbeat' {
            break
        }
        'anarchon;help;finish' {
            break
        }
        'anarchon;help;run' {
            break
        }
        'anarchon;help;list' {
            break
        }
        'anarchon;help;inspect' {
            break
        }
        'anarchon;help;history' {
            break
        }
        'anarchon;help;logs' {
            break
        }
        'anarchon;help;trim' {
            break
        }
        'anarchon;help;release' {
            break
        }
        'anarchon;help;pause' {
            break
        }
        'anarchon;help;resume' {
            break
        }
        'anarchon;help;migrate' {
            break
        }
        'anarchon;help;run-now' {
            break
        }
        'anarchon;help;doctor' {
            break
        }
        'anarchon;help;completions' {
            break
        }
        'anarchon;help;man' {
            break
        }
        'anarchon;help;help' {
            break
        }
    })

    $completions.Where{ $_.CompletionText -like "$wordToComplete*" } |
        Sort-Object -Property ListItemText
}
