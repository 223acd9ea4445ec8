# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_anarchon_global_optspecs
    string join \n redis= host= p/port= n/db= user= password-file= tls tls-ca= tls-insecure cluster prefix= backend= json o/output= no-headers color= time-format= connect-timeout= command-timeout= h/help V/version
end

function __fish_anarchon_needs_command
    # Figure out if the current invocation already has a command.
    set -l cmd (commandline -opc)
    set -e cmd[1]
    argparse -s (__fish_anarchon_global_optspecs) -- $cmd 2>/dev/null
    or return
    if set -q argv[1]
        # Also print the command, so this can be used to figure out what it is.
        echo $argv[1]
        return 1
    end
    return 0
end

function __fish_anarchon_using_subcommand
    set -l cmd (__fish_anarchon_needs_command)
    test -z "$cmd"
    and return 1
    contains -- $cmd[1] $argv
end

complete -c anarchon -n "__fish_anarchon_needs_command" -l redis -d 'Redis or Valkey URL: redis://[user:password@]host:port[/db], rediss:// for TLS, redis+cluster:// for Redis Cluster, redis+sentinel://host:port[,host:port]/<master>[/db] to ask Sentinel for the current primary (after a failover, the new one)' -r
complete -c anarchon -n "__fish_anarchon_needs_command" -l host -d 'Host to connect to [default: localhost, or the URL\'s]. --host, --port and --db, like redis-cli\'s, replace those parts of $ANARCHON_REDIS_URL / $REDIS_URL and keep the others' -r
complete -c anarchon -n "__fish_anarchon_needs_command" -s p -l port -d 'Port [default: 6379, or the URL\'s]' -r
complete -c anarchon -n "__fish_anarchon_needs_command" -s n -l db -d 'Database number [default: 0, or the URL\'s]' -r
complete -c anarchon -n "__fish_anarchon_needs_command" -l user -d 'ACL user name (on any URL or --host)' -r
complete -c anarchon -n "__fish_anarchon_needs_command" -l password-file -d 'Read the password from the first line of this file (else $ANARCHON_REDIS_PASSWORD). Used when the URL carries none. Never printed' -r -F
complete -c anarchon -n "__fish_anarchon_needs_command" -l tls-ca -d 'Trust this PEM CA bundle for TLS instead of the system\'s' -r -F
complete -c anarchon -n "__fish_anarchon_needs_command" -l prefix -d 'Prefix of every key, as the scheduler\'s `prefix` option' -r
complete -c anarchon -n "__fish_anarchon_needs_command" -l backend -d 'redis, or valkey: the Valkey flavour, which refuses the idmp strategy' -r -f -a "redis\t''
valkey\t''"
complete -c anarchon -n "__fish_anarchon_needs_command" -s o -l output -d 'Output format, as kubectl\'s -o: table (default), json (as --json), wide (tables are never cut to the terminal\'s width), name (only each row\'s first column: job names for `list`)' -r -f -a "table\t''
json\t''
wide\t''
name\t''"
complete -c anarchon -n "__fish_anarchon_needs_command" -l color -d 'When to use colour: auto (a terminal without NO_COLOR), always, never' -r -f -a "auto\t''
always\t''
never\t''"
complete -c anarchon -n "__fish_anarchon_needs_command" -l time-format -d 'How text output shows times: auto (compact UTC with "3m ago" on a terminal, RFC 3339 with milliseconds when piped), compact (2026-12-02 15:10:00, UTC), rfc3339, or relative (3m ago)' -r -f -a "auto\t''
compact\t''
rfc3339\t''
relative\t''"
complete -c anarchon -n "__fish_anarchon_needs_command" -l connect-timeout -d 'Give up connecting after this long' -r
complete -c anarchon -n "__fish_anarchon_needs_command" -l command-timeout -d 'Give up waiting for one reply after this long' -r
complete -c anarchon -n "__fish_anarchon_needs_command" -l tls -d 'Connect with TLS (as a rediss:// URL does), with --host or --port'
complete -c anarchon -n "__fish_anarchon_needs_command" -l tls-insecure -d 'Do not verify the server\'s TLS certificate (testing only)'
complete -c anarchon -n "__fish_anarchon_needs_command" -l cluster -d 'Use the Redis Cluster client (also implied by a redis+cluster:// or rediss+cluster:// URL)'
complete -c anarchon -n "__fish_anarchon_needs_command" -l json -d 'Print one JSON document instead of text (stable shape, see docs/guide.md, "JSON output")'
complete -c anarchon -n "__fish_anarchon_needs_command" -l no-headers -d 'Print tables without their header row (for scripts, as kubectl --no-headers)'
complete -c anarchon -n "__fish_anarchon_needs_command" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c anarchon -n "__fish_anarchon_needs_command" -s V -l version -d 'Print version'
complete -c anarchon -n "__fish_anarchon_needs_command" -f -a "claim" -d 'Claim one run of a job: exactly one caller wins it'
complete -c anarchon -n "__fish_anarchon_needs_command" -f -a "heartbeat" -d 'Push the lease of a run you hold forward (only with the current attempt\'s token)'
complete -c anarchon -n "__fish_anarchon_needs_command" -f -a "finish" -d 'End a run you hold as ok or failed, recording its result'
complete -c anarchon -n "__fish_anarchon_needs_command" -f -a "run" -d 'Run a command for one scheduled run, on whichever host wins it (the crontab wrapper)'
complete -c anarchon -n "__fish_anarchon_needs_command" -f -a "cron" -d 'Run every job of a crontab file, each scheduled run once across the replicas running it'
complete -c anarchon -n "__fish_anarchon_needs_command" -f -a "list" -d 'List every job under the prefix: layout, runs in progress, last run, last result, history'
complete -c anarchon -n "__fish_anarchon_needs_command" -f -a "inspect" -d 'Show one job in full: runs in progress with their leases, recent runs and results, keys, and its newest events (as kubectl describe): claims, takeovers, skips, releases, and who paused, resumed, released or ran it by hand, when and why'
complete -c anarchon -n "__fish_anarchon_needs_command" -f -a "top" -d 'A full-screen live view for on-call: jobs worst first, runs in progress, and actions on them'
complete -c anarchon -n "__fish_anarchon_needs_command" -f -a "next" -d 'When a job runs next: its fire times, jitter, the daylight-saving changes ahead, and what --catch-up would do after an outage'
complete -c anarchon -n "__fish_anarchon_needs_command" -f -a "history" -d 'Show a job\'s attempts and results, newest first (or, with --events, what happened to it and who did what)'
complete -c anarchon -n "__fish_anarchon_needs_command" -f -a "timeline" -d 'Draw a job\'s runs on a time axis: overlaps, takeovers, late starts, skips, failures'
complete -c anarchon -n "__fish_anarchon_needs_command" -f -a "logs" -d 'Show what a job\'s runs left behind: stderr tail, exit code or signal, timeout, duration'
complete -c anarchon -n "__fish_anarchon_needs_command" -f -a "wait" -d 'Wait for a run to end and exit with how it ended, as `gh run watch --exit-status`'
complete -c anarchon -n "__fish_anarchon_needs_command" -f -a "trim" -d 'Trim a job\'s history (or every job\'s) with the scheduler\'s rules'
complete -c anarchon -n "__fish_anarchon_needs_command" -f -a "release" -d 'Stop a run in progress without its token (a hung or vanished holder), safely'
complete -c anarchon -n "__fish_anarchon_needs_command" -f -a "pause" -d 'Pause a job across the fleet: every host\'s `run` skips it (exit 87) until `resume` or --until'
complete -c anarchon -n "__fish_anarchon_needs_command" -f -a "resume" -d 'End a job\'s pause: its next scheduled run is claimed as usual'
complete -c anarchon -n "__fish_anarchon_needs_command" -f -a "calendar" -d 'Keep named calendars of exclusion windows (holidays, freezes) that jobs share'
complete -c anarchon -n "__fish_anarchon_needs_command" -f -a "forget" -d 'Retire a job that no host runs any more: monitoring stops expecting its runs'
complete -c anarchon -n "__fish_anarchon_needs_command" -f -a "migrate" -d 'Move the store to format 2 (anarchon\'s own layout), or back to format 1 with --to 1'
complete -c anarchon -n "__fish_anarchon_needs_command" -f -a "run-now" -d 'Start a manual run of a job now: on a replica of `anarchon cron`, or here'
complete -c anarchon -n "__fish_anarchon_needs_command" -f -a "check" -d 'Check that jobs ran when their schedules said: a dead man\'s switch for monitoring'
complete -c anarchon -n "__fish_anarchon_needs_command" -f -a "metrics" -d 'Print Prometheus metrics of every job (health, last success, leases, ...), or serve them'
complete -c anarchon -n "__fish_anarchon_needs_command" -f -a "serve" -d 'Serve a read-only status page of every job (and /metrics) to a browser'
complete -c anarchon -n "__fish_anarchon_needs_command" -f -a "doctor" -d 'Check the server: kind and version, strategies, mode, eviction, format, clock, latency'
complete -c anarchon -n "__fish_anarchon_needs_command" -f -a "completions" -d 'Print shell completions (bash, zsh, fish, powershell, elvish), or write them all to --dir'
complete -c anarchon -n "__fish_anarchon_needs_command" -f -a "man" -d 'Print the man page, or write one per command to --dir'
complete -c anarchon -n "__fish_anarchon_needs_command" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c anarchon -n "__fish_anarchon_using_subcommand claim" -l slot -d 'The run: `now` (this minute by the server\'s clock), ms since the epoch, or RFC 3339' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand claim" -l strategy -d 'lease (default): leases, backups, overlap protection, retries. stream-id, idmp, script: claim-only strategies that only decide who runs (see docs/guide.md, "Strategies")' -r -f -a "lease\t''
stream-id\t''
idmp\t''
script\t''"
complete -c anarchon -n "__fish_anarchon_using_subcommand claim" -l window -d 'script strategy: how long a claimed run is remembered; must exceed --max-late [default: 5m]' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand claim" -l idmp-duration -d 'idmp strategy: seconds Redis remembers a run\'s idempotency ID (1..86400) [default: 300]' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand claim" -l idmp-max-size -d 'idmp strategy: run IDs Redis keeps per job (1..10000) [default: 1000]' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand claim" -l lease -d 'How long a claim holds the run without a heartbeat [default: 30s]' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand claim" -l max-attempts -d 'Attempts in all: after a holder\'s lease expires, a new claim takes attempt+1 until this many [default: 3]. An attempt handed over (a replica of `cron` shutting down) is not counted (up to 10 such)' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand claim" -l overlap -d 'What a slot does while an older run of the job holds a live lease: forbid (skip it), allow (run both), replace (stop the older one first), buffer (run it when the older one ends) [default: forbid]' -r -f -a "forbid\t'Skip the new slot while an older run holds the job (recorded skipped)'
allow\t'Run the new slot beside the older run'
replace\t'Stop the older run (as `anarchon release` does), then run the new slot (`run` only)'
buffer\t'Run the new slot as soon as the older run ends, within --max-late; one slot waits at most, a further one is recorded skipped (`run` only)'"
complete -c anarchon -n "__fish_anarchon_using_subcommand claim" -l runner -d 'Who is claiming, recorded in the run (default host:pid)' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand claim" -l history-size -d 'Keep about this many runs of history per job (the scheduler\'s historySize) [default: 1000]' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand claim" -l history-ttl -d 'Also drop history older than this (the scheduler\'s historyTtlMs)' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand claim" -l redis -d 'Redis or Valkey URL: redis://[user:password@]host:port[/db], rediss:// for TLS, redis+cluster:// for Redis Cluster, redis+sentinel://host:port[,host:port]/<master>[/db] to ask Sentinel for the current primary (after a failover, the new one)' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand claim" -l host -d 'Host to connect to [default: localhost, or the URL\'s]. --host, --port and --db, like redis-cli\'s, replace those parts of $ANARCHON_REDIS_URL / $REDIS_URL and keep the others' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand claim" -s p -l port -d 'Port [default: 6379, or the URL\'s]' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand claim" -s n -l db -d 'Database number [default: 0, or the URL\'s]' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand claim" -l user -d 'ACL user name (on any URL or --host)' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand claim" -l password-file -d 'Read the password from the first line of this file (else $ANARCHON_REDIS_PASSWORD). Used when the URL carries none. Never printed' -r -F
complete -c anarchon -n "__fish_anarchon_using_subcommand claim" -l tls-ca -d 'Trust this PEM CA bundle for TLS instead of the system\'s' -r -F
complete -c anarchon -n "__fish_anarchon_using_subcommand claim" -l prefix -d 'Prefix of every key, as the scheduler\'s `prefix` option' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand claim" -l backend -d 'redis, or valkey: the Valkey flavour, which refuses the idmp strategy' -r -f -a "redis\t''
valkey\t''"
complete -c anarchon -n "__fish_anarchon_using_subcommand claim" -s o -l output -d 'Output format, as kubectl\'s -o: table (default), json (as --json), wide (tables are never cut to the terminal\'s width), name (only each row\'s first column: job names for `list`)' -r -f -a "table\t''
json\t''
wide\t''
name\t''"
complete -c anarchon -n "__fish_anarchon_using_subcommand claim" -l color -d 'When to use colour: auto (a terminal without NO_COLOR), always, never' -r -f -a "auto\t''
always\t''
never\t''"
complete -c anarchon -n "__fish_anarchon_using_subcommand claim" -l time-format -d 'How text output shows times: auto (compact UTC with "3m ago" on a terminal, RFC 3339 with milliseconds when piped), compact (2026-12-02 15:10:00, UTC), rfc3339, or relative (3m ago)' -r -f -a "auto\t''
compact\t''
rfc3339\t''
relative\t''"
complete -c anarchon -n "__fish_anarchon_using_subcommand claim" -l connect-timeout -d 'Give up connecting after this long' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand claim" -l command-timeout -d 'Give up waiting for one reply after this long' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand claim" -l new -d 'Create the job if the store does not know it yet. Needed only on a terminal (a person\'s typo must not create a job); scripts and crontabs create jobs as they claim them'
complete -c anarchon -n "__fish_anarchon_using_subcommand claim" -l tls -d 'Connect with TLS (as a rediss:// URL does), with --host or --port'
complete -c anarchon -n "__fish_anarchon_using_subcommand claim" -l tls-insecure -d 'Do not verify the server\'s TLS certificate (testing only)'
complete -c anarchon -n "__fish_anarchon_using_subcommand claim" -l cluster -d 'Use the Redis Cluster client (also implied by a redis+cluster:// or rediss+cluster:// URL)'
complete -c anarchon -n "__fish_anarchon_using_subcommand claim" -l json -d 'Print one JSON document instead of text (stable shape, see docs/guide.md, "JSON output")'
complete -c anarchon -n "__fish_anarchon_using_subcommand claim" -l no-headers -d 'Print tables without their header row (for scripts, as kubectl --no-headers)'
complete -c anarchon -n "__fish_anarchon_using_subcommand claim" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c anarchon -n "__fish_anarchon_using_subcommand heartbeat" -l slot -d 'The run: `now` (this minute by the server\'s clock), ms since the epoch, or RFC 3339' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand heartbeat" -l strategy -d 'lease (default): leases, backups, overlap protection, retries. stream-id, idmp, script: claim-only strategies that only decide who runs (see docs/guide.md, "Strategies")' -r -f -a "lease\t''
stream-id\t''
idmp\t''
script\t''"
complete -c anarchon -n "__fish_anarchon_using_subcommand heartbeat" -l window -d 'script strategy: how long a claimed run is remembered; must exceed --max-late [default: 5m]' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand heartbeat" -l idmp-duration -d 'idmp strategy: seconds Redis remembers a run\'s idempotency ID (1..86400) [default: 300]' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand heartbeat" -l idmp-max-size -d 'idmp strategy: run IDs Redis keeps per job (1..10000) [default: 1000]' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand heartbeat" -l token -d 'The token `claim` printed' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand heartbeat" -l lease -d 'The new lease, from now by the server\'s clock' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand heartbeat" -l redis -d 'Redis or Valkey URL: redis://[user:password@]host:port[/db], rediss:// for TLS, redis+cluster:// for Redis Cluster, redis+sentinel://host:port[,host:port]/<master>[/db] to ask Sentinel for the current primary (after a failover, the new one)' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand heartbeat" -l host -d 'Host to connect to [default: localhost, or the URL\'s]. --host, --port and --db, like redis-cli\'s, replace those parts of $ANARCHON_REDIS_URL / $REDIS_URL and keep the others' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand heartbeat" -s p -l port -d 'Port [default: 6379, or the URL\'s]' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand heartbeat" -s n -l db -d 'Database number [default: 0, or the URL\'s]' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand heartbeat" -l user -d 'ACL user name (on any URL or --host)' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand heartbeat" -l password-file -d 'Read the password from the first line of this file (else $ANARCHON_REDIS_PASSWORD). Used when the URL carries none. Never printed' -r -F
complete -c anarchon -n "__fish_anarchon_using_subcommand heartbeat" -l tls-ca -d 'Trust this PEM CA bundle for TLS instead of the system\'s' -r -F
complete -c anarchon -n "__fish_anarchon_using_subcommand heartbeat" -l prefix -d 'Prefix of every key, as the scheduler\'s `prefix` option' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand heartbeat" -l backend -d 'redis, or valkey: the Valkey flavour, which refuses the idmp strategy' -r -f -a "redis\t''
valkey\t''"
complete -c anarchon -n "__fish_anarchon_using_subcommand heartbeat" -s o -l output -d 'Output format, as kubectl\'s -o: table (default), json (as --json), wide (tables are never cut to the terminal\'s width), name (only each row\'s first column: job names for `list`)' -r -f -a "table\t''
json\t''
wide\t''
name\t''"
complete -c anarchon -n "__fish_anarchon_using_subcommand heartbeat" -l color -d 'When to use colour: auto (a terminal without NO_COLOR), always, never' -r -f -a "auto\t''
always\t''
never\t''"
complete -c anarchon -n "__fish_anarchon_using_subcommand heartbeat" -l time-format -d 'How text output shows times: auto (compact UTC with "3m ago" on a terminal, RFC 3339 with milliseconds when piped), compact (2026-12-02 15:10:00, UTC), rfc3339, or relative (3m ago)' -r -f -a "auto\t''
compact\t''
rfc3339\t''
relative\t''"
complete -c anarchon -n "__fish_anarchon_using_subcommand heartbeat" -l connect-timeout -d 'Give up connecting after this long' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand heartbeat" -l command-timeout -d 'Give up waiting for one reply after this long' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand heartbeat" -l tls -d 'Connect with TLS (as a rediss:// URL does), with --host or --port'
complete -c anarchon -n "__fish_anarchon_using_subcommand heartbeat" -l tls-insecure -d 'Do not verify the server\'s TLS certificate (testing only)'
complete -c anarchon -n "__fish_anarchon_using_subcommand heartbeat" -l cluster -d 'Use the Redis Cluster client (also implied by a redis+cluster:// or rediss+cluster:// URL)'
complete -c anarchon -n "__fish_anarchon_using_subcommand heartbeat" -l json -d 'Print one JSON document instead of text (stable shape, see docs/guide.md, "JSON output")'
complete -c anarchon -n "__fish_anarchon_using_subcommand heartbeat" -l no-headers -d 'Print tables without their header row (for scripts, as kubectl --no-headers)'
complete -c anarchon -n "__fish_anarchon_using_subcommand heartbeat" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c anarchon -n "__fish_anarchon_using_subcommand finish" -l slot -d 'The run: `now` (this minute by the server\'s clock), ms since the epoch, or RFC 3339' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand finish" -l strategy -d 'lease (default): leases, backups, overlap protection, retries. stream-id, idmp, script: claim-only strategies that only decide who runs (see docs/guide.md, "Strategies")' -r -f -a "lease\t''
stream-id\t''
idmp\t''
script\t''"
complete -c anarchon -n "__fish_anarchon_using_subcommand finish" -l window -d 'script strategy: how long a claimed run is remembered; must exceed --max-late [default: 5m]' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand finish" -l idmp-duration -d 'idmp strategy: seconds Redis remembers a run\'s idempotency ID (1..86400) [default: 300]' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand finish" -l idmp-max-size -d 'idmp strategy: run IDs Redis keeps per job (1..10000) [default: 1000]' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand finish" -l token -d 'The token `claim` printed' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand finish" -l status -d 'How the run ended' -r -f -a "ok\t''
failed\t''"
complete -c anarchon -n "__fish_anarchon_using_subcommand finish" -l result -d 'A result to record, as text' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand finish" -l result-json -d 'A result to record, as JSON' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand finish" -l redis -d 'Redis or Valkey URL: redis://[user:password@]host:port[/db], rediss:// for TLS, redis+cluster:// for Redis Cluster, redis+sentinel://host:port[,host:port]/<master>[/db] to ask Sentinel for the current primary (after a failover, the new one)' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand finish" -l host -d 'Host to connect to [default: localhost, or the URL\'s]. --host, --port and --db, like redis-cli\'s, replace those parts of $ANARCHON_REDIS_URL / $REDIS_URL and keep the others' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand finish" -s p -l port -d 'Port [default: 6379, or the URL\'s]' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand finish" -s n -l db -d 'Database number [default: 0, or the URL\'s]' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand finish" -l user -d 'ACL user name (on any URL or --host)' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand finish" -l password-file -d 'Read the password from the first line of this file (else $ANARCHON_REDIS_PASSWORD). Used when the URL carries none. Never printed' -r -F
complete -c anarchon -n "__fish_anarchon_using_subcommand finish" -l tls-ca -d 'Trust this PEM CA bundle for TLS instead of the system\'s' -r -F
complete -c anarchon -n "__fish_anarchon_using_subcommand finish" -l prefix -d 'Prefix of every key, as the scheduler\'s `prefix` option' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand finish" -l backend -d 'redis, or valkey: the Valkey flavour, which refuses the idmp strategy' -r -f -a "redis\t''
valkey\t''"
complete -c anarchon -n "__fish_anarchon_using_subcommand finish" -s o -l output -d 'Output format, as kubectl\'s -o: table (default), json (as --json), wide (tables are never cut to the terminal\'s width), name (only each row\'s first column: job names for `list`)' -r -f -a "table\t''
json\t''
wide\t''
name\t''"
complete -c anarchon -n "__fish_anarchon_using_subcommand finish" -l color -d 'When to use colour: auto (a terminal without NO_COLOR), always, never' -r -f -a "auto\t''
always\t''
never\t''"
complete -c anarchon -n "__fish_anarchon_using_subcommand finish" -l time-format -d 'How text output shows times: auto (compact UTC with "3m ago" on a terminal, RFC 3339 with milliseconds when piped), compact (2026-12-02 15:10:00, UTC), rfc3339, or relative (3m ago)' -r -f -a "auto\t''
compact\t''
rfc3339\t''
relative\t''"
complete -c anarchon -n "__fish_anarchon_using_subcommand finish" -l connect-timeout -d 'Give up connecting after this long' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand finish" -l command-timeout -d 'Give up waiting for one reply after this long' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand finish" -l tls -d 'Connect with TLS (as a rediss:// URL does), with --host or --port'
complete -c anarchon -n "__fish_anarchon_using_subcommand finish" -l tls-insecure -d 'Do not verify the server\'s TLS certificate (testing only)'
complete -c anarchon -n "__fish_anarchon_using_subcommand finish" -l cluster -d 'Use the Redis Cluster client (also implied by a redis+cluster:// or rediss+cluster:// URL)'
complete -c anarchon -n "__fish_anarchon_using_subcommand finish" -l json -d 'Print one JSON document instead of text (stable shape, see docs/guide.md, "JSON output")'
complete -c anarchon -n "__fish_anarchon_using_subcommand finish" -l no-headers -d 'Print tables without their header row (for scripts, as kubectl --no-headers)'
complete -c anarchon -n "__fish_anarchon_using_subcommand finish" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c anarchon -n "__fish_anarchon_using_subcommand run" -l job -d 'The job\'s name (at most 200 bytes; no braces or control characters)' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand run" -l schedule -d 'Cron schedule the crontab line follows: 5 fields, 6 with seconds first, or @hourly style. The run is its latest fire time at or before the Redis server\'s clock' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand run" -l tz -d 'Time zone of --schedule (IANA name) [default: UTC]. Across daylight saving, a fixed-hour time the change skips runs once right after the jump, one it repeats runs once (the first); wildcard hours follow the local clock' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand run" -l slot -d 'Run this slot instead of one from --schedule: `now` (this minute), ms, or RFC 3339' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand run" -l max-late -d 'Do not run a scheduled slot this much later than its time (exit 84)' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand run" -l jitter -d 'Wait a delay of up to this long before claiming, the same on every host for one job and slot (derived from both), so that many jobs on one schedule do not all hit Redis and start their work in the same second (the backend\'s jitterMs). Not counted against --max-late' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand run" -l catch-up -d 'Also run, oldest first, the schedule\'s slots within this window that no host ever claimed (never one from before the store first saw the job: a first deployment catches up nothing)' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand run" -l backfill -d 'Instead of the current slot, run every slot of --schedule from FROM to TO (both included; each `now`, ms, RFC 3339, or a duration ago: `6h..now`) that never ran, oldest first, one at a time, each claimed like any run: several hosts backfilling one range run each slot once. Slots before the job was first seen are run too (you asked for them)' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand run" -l backfill-max -d 'With --backfill: run at most this many slots (the oldest); say how many were left' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand run" -l wait-replicas -d 'After winning, wait until N replicas hold the claim (Redis WAIT) before starting the command, and again for the result after it ends: narrows the window in which a failover loses a claim and another host runs the slot again' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand run" -l wait-timeout -d 'How long --wait-replicas waits (shorter than half the lease and than --command-timeout)' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand run" -l if-unreplicated -d 'When fewer than --wait-replicas acknowledged the claim in time: run the command anyway, with a warning, or skip it: end the run as failed without starting it, exit 88 (a failover can then lose the run, never run it twice)' -r -f -a "run\t'Start the command anyway, with a warning'
skip\t'Do not start it: the run ends as failed (exit 88)'"
complete -c anarchon -n "__fish_anarchon_using_subcommand run" -l catch-up-policy -d 'Which missed runs --catch-up runs: all of them (the newest --catch-up-max), or latest: only the newest due run, when it was missed. The others are recorded as skipped, so no host runs them later and history shows them (store format 2)' -r -f -a "all\t'Every missed run, oldest first (at most --catch-up-max, the newest)'
latest\t'Only the newest due run, if it was missed; the older ones are skipped'"
complete -c anarchon -n "__fish_anarchon_using_subcommand run" -l catch-up-max -d 'Run at most this many missed runs at once (the newest; older ones are recorded as skipped)' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand run" -l strategy -d 'lease (default): leases, backups, overlap protection, retries. stream-id, idmp, script: claim-only strategies that only decide who runs (see docs/guide.md, "Strategies")' -r -f -a "lease\t''
stream-id\t''
idmp\t''
script\t''"
complete -c anarchon -n "__fish_anarchon_using_subcommand run" -l window -d 'script strategy: how long a claimed run is remembered; must exceed --max-late [default: 5m]' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand run" -l idmp-duration -d 'idmp strategy: seconds Redis remembers a run\'s idempotency ID (1..86400) [default: 300]' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand run" -l idmp-max-size -d 'idmp strategy: run IDs Redis keeps per job (1..10000) [default: 1000]' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand run" -l lease -d 'How long a claim holds the run without a heartbeat [default: 30s]' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand run" -l max-attempts -d 'Attempts in all: after a holder\'s lease expires, a new claim takes attempt+1 until this many [default: 3]. An attempt handed over (a replica of `cron` shutting down) is not counted (up to 10 such)' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand run" -l overlap -d 'What a slot does while an older run of the job holds a live lease: forbid (skip it), allow (run both), replace (stop the older one first), buffer (run it when the older one ends) [default: forbid]' -r -f -a "forbid\t'Skip the new slot while an older run holds the job (recorded skipped)'
allow\t'Run the new slot beside the older run'
replace\t'Stop the older run (as `anarchon release` does), then run the new slot (`run` only)'
buffer\t'Run the new slot as soon as the older run ends, within --max-late; one slot waits at most, a further one is recorded skipped (`run` only)'"
complete -c anarchon -n "__fish_anarchon_using_subcommand run" -l runner -d 'Who is claiming, recorded in the run (default host:pid)' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand run" -l history-size -d 'Keep about this many runs of history per job (the scheduler\'s historySize) [default: 1000]' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand run" -l history-ttl -d 'Also drop history older than this (the scheduler\'s historyTtlMs)' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand run" -l on-failure -d 'After an attempt this host ran fails (failed, interrupted, timed out), run CMD through /bin/sh with the run\'s facts in its environment: ANARCHON_JOB, ANARCHON_SLOT, ANARCHON_SLOT_TIME, ANARCHON_ATTEMPT, ANARCHON_RUNNER, ANARCHON_STATUS, ANARCHON_EXIT_CODE, ANARCHON_SIGNAL, ANARCHON_TIMED_OUT, ANARCHON_STDERR_TAIL (a file with the last 4 KiB of its stderr) and TRACEPARENT (the failed attempt\'s, as its command had it). Only the host that ran it notifies; the hook\'s own failure is reported and never changes the run\'s result or exit code' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand run" -l ping -d 'Ping a dead man\'s switch (the Healthchecks.io protocol) for each attempt this host runs: URL/start when the command starts, URL when it finished, URL/fail when it failed (with its stderr tail). Hosts that do not run the slot do not ping' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand run" -l ping-timeout -d 'How long one --ping may take in all, retries included; the run never waits longer' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand run" -l retries -d 'When the command fails, run it again up to N times, each a new attempt of the same slot that any host standing by may take (this one too), after --retry-delay, never beside another attempt. A pending retry holds the job as a run in progress does (under --overlap forbid the next slot is skipped while it waits). Counted apart from --max-attempts, which counts lost leases. Lease strategy only' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand run" -l retry-delay -d 'With --retries: the wait before the first retry [default: 30s]' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand run" -l retry-backoff -d 'With --retries: each later wait is the one before times this [default: 2]' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand run" -l retry-max-delay -d 'With --retries: no wait is longer than this [default: 10m]' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand run" -l retry-on -d 'With --retries: retry only when the command exits with one of these codes (comma separated, as `75,111`) [default: any failure, a signal or a timeout included]' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand run" -l limit -d 'Hold a permit of the named limit while the command runs: at most N runs of all the jobs that name it, on any host or replica, run at once (`--limit db-heavy=2`; repeat for several). A won run waits for a permit up to --max-late, then is recorded interrupted with who held them (exit 94). A permit lapses with its holder\'s lease. Give every job of a limit the same N. Lease strategy only' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand run" -l exclude -d 'Do not run the slots in this window, in the schedule\'s zone: a date (2026-12-24), dates (2026-12-24..2026-12-26), a day of every year (12-25), days of the week (sat,sun or mon-fri), a time of day (02:00-03:00, may wrap past midnight), or days@times (fri@22:00-06:00); name it with NAME=. Such a slot is recorded skipped with the window\'s name (exit 0): monitoring counts it decided, never missed. Repeat for several' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand run" -l calendar -d 'Also skip the windows of this named calendar, which operators keep in the store (`anarchon calendar`); read at each slot, so an edit applies to the next one. Repeat for several' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand run" -l on-failure-timeout -d 'How long --on-failure may run before it is killed' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand run" -l backup-for -d 'Stand by as a backup for at most this long [default: as long as the run is held and has attempts left]. A backup follows the holder\'s lease and takes over the moment it expires' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand run" -l heartbeat -d 'Heartbeat interval while the command runs (default: a third of --lease)' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand run" -l on-lease-lost -d 'What to do with the command when the lease is lost: terminate it, or let it continue [default: terminate]' -r -f -a "terminate\t''
continue\t''"
complete -c anarchon -n "__fish_anarchon_using_subcommand run" -l kill-after -d 'Grace between SIGTERM and SIGKILL when anarchon stops the command' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand run" -l timeout -d 'Stop the command after this long and record it as failed (exit 124)' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand run" -l live-output-lines -d 'With --live-output: the most lines of an attempt\'s output sent to the store; the rest is printed here as usual but not sent' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand run" -l redis -d 'Redis or Valkey URL: redis://[user:password@]host:port[/db], rediss:// for TLS, redis+cluster:// for Redis Cluster, redis+sentinel://host:port[,host:port]/<master>[/db] to ask Sentinel for the current primary (after a failover, the new one)' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand run" -l host -d 'Host to connect to [default: localhost, or the URL\'s]. --host, --port and --db, like redis-cli\'s, replace those parts of $ANARCHON_REDIS_URL / $REDIS_URL and keep the others' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand run" -s p -l port -d 'Port [default: 6379, or the URL\'s]' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand run" -s n -l db -d 'Database number [default: 0, or the URL\'s]' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand run" -l user -d 'ACL user name (on any URL or --host)' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand run" -l password-file -d 'Read the password from the first line of this file (else $ANARCHON_REDIS_PASSWORD). Used when the URL carries none. Never printed' -r -F
complete -c anarchon -n "__fish_anarchon_using_subcommand run" -l tls-ca -d 'Trust this PEM CA bundle for TLS instead of the system\'s' -r -F
complete -c anarchon -n "__fish_anarchon_using_subcommand run" -l prefix -d 'Prefix of every key, as the scheduler\'s `prefix` option' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand run" -l backend -d 'redis, or valkey: the Valkey flavour, which refuses the idmp strategy' -r -f -a "redis\t''
valkey\t''"
complete -c anarchon -n "__fish_anarchon_using_subcommand run" -s o -l output -d 'Output format, as kubectl\'s -o: table (default), json (as --json), wide (tables are never cut to the terminal\'s width), name (only each row\'s first column: job names for `list`)' -r -f -a "table\t''
json\t''
wide\t''
name\t''"
complete -c anarchon -n "__fish_anarchon_using_subcommand run" -l color -d 'When to use colour: auto (a terminal without NO_COLOR), always, never' -r -f -a "auto\t''
always\t''
never\t''"
complete -c anarchon -n "__fish_anarchon_using_subcommand run" -l time-format -d 'How text output shows times: auto (compact UTC with "3m ago" on a terminal, RFC 3339 with milliseconds when piped), compact (2026-12-02 15:10:00, UTC), rfc3339, or relative (3m ago)' -r -f -a "auto\t''
compact\t''
rfc3339\t''
relative\t''"
complete -c anarchon -n "__fish_anarchon_using_subcommand run" -l connect-timeout -d 'Give up connecting after this long' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand run" -l command-timeout -d 'Give up waiting for one reply after this long' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand run" -l include-skipped -d 'With --backfill: also run slots a policy recorded skipped (--catch-up-policy, --overlap), as long as nothing ever ran them'
complete -c anarchon -n "__fish_anarchon_using_subcommand run" -l dry-run -d 'With --backfill: list the range\'s slots and what would become of each; run nothing'
complete -c anarchon -n "__fish_anarchon_using_subcommand run" -l no-backup -d 'When another host holds the run, exit at once (82) instead of waiting as its backup'
complete -c anarchon -n "__fish_anarchon_using_subcommand run" -l skipped-ok -d 'Exit 0 instead of 80/81/82/87 when another host holds or already ran the slot, or the job is paused (for monitoring that treats any non-zero cron exit as a failure). Too late (84) stays non-zero'
complete -c anarchon -n "__fish_anarchon_using_subcommand run" -l shell -d 'Run the command line with /bin/sh -c (the words after -- joined by spaces)'
complete -c anarchon -n "__fish_anarchon_using_subcommand run" -l foreground -d 'Keep the command in anarchon\'s process group, so it can read from the terminal (as `timeout --foreground`). Signals then reach the command alone, not its children'
complete -c anarchon -n "__fish_anarchon_using_subcommand run" -l leave-children -d 'Let processes the command started in the background run on after it exits. By default, as systemd\'s KillMode=control-group, what the command leaves in its process group when it exits is stopped (SIGTERM, SIGKILL after --kill-after) before the run is recorded ended: a child left running would overlap the job\'s next run'
complete -c anarchon -n "__fish_anarchon_using_subcommand run" -l keep-stdout -d 'Keep the last 4 KiB of the command\'s stdout in its result (`stdout_tail`, shown by `logs` and `history -v`), as its stderr is always kept: for jobs that report on stdout. The command\'s stdout then goes through a pipe (it is still printed as it comes), so a command that asks whether its stdout is a terminal hears no'
complete -c anarchon -n "__fish_anarchon_using_subcommand run" -l live-output -d 'Send the command\'s output to the store as it prints, line by line, so that `anarchon logs -f JOB` follows it from any host while it runs (and for a day after, or the job\'s --history-ttl if shorter). At most --live-output-lines lines per attempt. Its stdout then goes through a pipe, as with --keep-stdout. Off by default: a run costs the server nothing more without it'
complete -c anarchon -n "__fish_anarchon_using_subcommand run" -s q -l quiet -d 'No progress or notes on stderr; errors and lost leases are still reported'
complete -c anarchon -n "__fish_anarchon_using_subcommand run" -l tls -d 'Connect with TLS (as a rediss:// URL does), with --host or --port'
complete -c anarchon -n "__fish_anarchon_using_subcommand run" -l tls-insecure -d 'Do not verify the server\'s TLS certificate (testing only)'
complete -c anarchon -n "__fish_anarchon_using_subcommand run" -l cluster -d 'Use the Redis Cluster client (also implied by a redis+cluster:// or rediss+cluster:// URL)'
complete -c anarchon -n "__fish_anarchon_using_subcommand run" -l json -d 'Print one JSON document instead of text (stable shape, see docs/guide.md, "JSON output")'
complete -c anarchon -n "__fish_anarchon_using_subcommand run" -l no-headers -d 'Print tables without their header row (for scripts, as kubectl --no-headers)'
complete -c anarchon -n "__fish_anarchon_using_subcommand run" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c anarchon -n "__fish_anarchon_using_subcommand cron" -l next -d 'How many next runs --check shows for each job' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand cron" -l shutdown-grace -d 'On SIGTERM or SIGINT, how long running commands may take to finish before they are stopped (SIGTERM, SIGKILL 2 s later) and their runs handed to another replica. Keep it under what the orchestrator allows (Kubernetes: terminationGracePeriodSeconds, 30 s)' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand cron" -l log-format -d 'How the log is written: text (`TIME LEVEL [job slot #attempt] message`, one line a record) or json (one object a line, for log collectors: time, level, job, slot, attempt, event, exit_code, duration, message)' -r -f -a "text\t''
json\t''"
complete -c anarchon -n "__fish_anarchon_using_subcommand cron" -l listen -d 'Serve /metrics (Prometheus: every job\'s health, and this daemon\'s own), /healthz (liveness: the daemon answers) and /readyz (503 while the store does not answer or refuses writes, by a probe every second) at ADDR (host:port, or a port alone on 127.0.0.1). Bind 0.0.0.0 only on purpose' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand cron" -l max-running -d 'Run at most N commands at once on this replica: at N it claims no new slot and the other replicas take the runs; a slot that finds every replica full waits up to its --max-late for room, then is recorded skipped with why. Takeovers of runs in progress and run-now requests are not held back. [default: no cap]' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand cron" -l service -d 'The service whose replicas run this crontab (the same NAME in every replica of it, for example the Deployment\'s name). A job removed from the crontab then stops being expected by `check`, `list`, `metrics` and `top` once no live replica of the service has it (it reads `retired`); while the service has no live replica, its jobs are judged as any (a service that is down alerts). Without it, a removed job is retired by `anarchon forget`' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand cron" -l redis -d 'Redis or Valkey URL: redis://[user:password@]host:port[/db], rediss:// for TLS, redis+cluster:// for Redis Cluster, redis+sentinel://host:port[,host:port]/<master>[/db] to ask Sentinel for the current primary (after a failover, the new one)' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand cron" -l host -d 'Host to connect to [default: localhost, or the URL\'s]. --host, --port and --db, like redis-cli\'s, replace those parts of $ANARCHON_REDIS_URL / $REDIS_URL and keep the others' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand cron" -s p -l port -d 'Port [default: 6379, or the URL\'s]' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand cron" -s n -l db -d 'Database number [default: 0, or the URL\'s]' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand cron" -l user -d 'ACL user name (on any URL or --host)' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand cron" -l password-file -d 'Read the password from the first line of this file (else $ANARCHON_REDIS_PASSWORD). Used when the URL carries none. Never printed' -r -F
complete -c anarchon -n "__fish_anarchon_using_subcommand cron" -l tls-ca -d 'Trust this PEM CA bundle for TLS instead of the system\'s' -r -F
complete -c anarchon -n "__fish_anarchon_using_subcommand cron" -l prefix -d 'Prefix of every key, as the scheduler\'s `prefix` option' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand cron" -l backend -d 'redis, or valkey: the Valkey flavour, which refuses the idmp strategy' -r -f -a "redis\t''
valkey\t''"
complete -c anarchon -n "__fish_anarchon_using_subcommand cron" -s o -l output -d 'Output format, as kubectl\'s -o: table (default), json (as --json), wide (tables are never cut to the terminal\'s width), name (only each row\'s first column: job names for `list`)' -r -f -a "table\t''
json\t''
wide\t''
name\t''"
complete -c anarchon -n "__fish_anarchon_using_subcommand cron" -l color -d 'When to use colour: auto (a terminal without NO_COLOR), always, never' -r -f -a "auto\t''
always\t''
never\t''"
complete -c anarchon -n "__fish_anarchon_using_subcommand cron" -l time-format -d 'How text output shows times: auto (compact UTC with "3m ago" on a terminal, RFC 3339 with milliseconds when piped), compact (2026-12-02 15:10:00, UTC), rfc3339, or relative (3m ago)' -r -f -a "auto\t''
compact\t''
rfc3339\t''
relative\t''"
complete -c anarchon -n "__fish_anarchon_using_subcommand cron" -l connect-timeout -d 'Give up connecting after this long' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand cron" -l command-timeout -d 'Give up waiting for one reply after this long' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand cron" -l check -d 'Read the file and print each job\'s name, schedule, time zone and next runs, then exit: 0 when it reads, 2 with every error (FILE:LINE: why) when it does not'
complete -c anarchon -n "__fish_anarchon_using_subcommand cron" -s v -l verbose -d 'Also log the routine notes, at level debug: a replica standing by for a run another holds, a slot another replica ran ("already finished; not run here")'
complete -c anarchon -n "__fish_anarchon_using_subcommand cron" -l tls -d 'Connect with TLS (as a rediss:// URL does), with --host or --port'
complete -c anarchon -n "__fish_anarchon_using_subcommand cron" -l tls-insecure -d 'Do not verify the server\'s TLS certificate (testing only)'
complete -c anarchon -n "__fish_anarchon_using_subcommand cron" -l cluster -d 'Use the Redis Cluster client (also implied by a redis+cluster:// or rediss+cluster:// URL)'
complete -c anarchon -n "__fish_anarchon_using_subcommand cron" -l json -d 'Print one JSON document instead of text (stable shape, see docs/guide.md, "JSON output")'
complete -c anarchon -n "__fish_anarchon_using_subcommand cron" -l no-headers -d 'Print tables without their header row (for scripts, as kubectl --no-headers)'
complete -c anarchon -n "__fish_anarchon_using_subcommand cron" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c anarchon -n "__fish_anarchon_using_subcommand list" -l pattern -d 'Only jobs whose name matches this Redis glob (`*`, `?`, `[abc]`)' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand list" -l strategy -d 'Only jobs of this strategy\'s layout: lease, or any claim-only one [default: both layouts]' -r -f -a "lease\t''
stream-id\t''
idmp\t''
script\t''"
complete -c anarchon -n "__fish_anarchon_using_subcommand list" -l status -d 'Only jobs whose newest run is in this state (`expired`: marked running, lease ended)' -r -f -a "running\t''
expired\t''
paused\t''
finished\t''
failed\t''
interrupted\t''
claimed\t''"
complete -c anarchon -n "__fish_anarchon_using_subcommand list" -l sort -d 'Order of the rows' -r -f -a "name\t'By job name'
last-run\t'Newest run first'
state\t'By state, then name (expired and failed first)'
health\t'By health, then name: what needs a person first (missed, failing, late)'"
complete -c anarchon -n "__fish_anarchon_using_subcommand list" -l interval -d 'How often --watch (and history --follow) reads the store again' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand list" -l redis -d 'Redis or Valkey URL: redis://[user:password@]host:port[/db], rediss:// for TLS, redis+cluster:// for Redis Cluster, redis+sentinel://host:port[,host:port]/<master>[/db] to ask Sentinel for the current primary (after a failover, the new one)' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand list" -l host -d 'Host to connect to [default: localhost, or the URL\'s]. --host, --port and --db, like redis-cli\'s, replace those parts of $ANARCHON_REDIS_URL / $REDIS_URL and keep the others' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand list" -s p -l port -d 'Port [default: 6379, or the URL\'s]' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand list" -s n -l db -d 'Database number [default: 0, or the URL\'s]' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand list" -l user -d 'ACL user name (on any URL or --host)' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand list" -l password-file -d 'Read the password from the first line of this file (else $ANARCHON_REDIS_PASSWORD). Used when the URL carries none. Never printed' -r -F
complete -c anarchon -n "__fish_anarchon_using_subcommand list" -l tls-ca -d 'Trust this PEM CA bundle for TLS instead of the system\'s' -r -F
complete -c anarchon -n "__fish_anarchon_using_subcommand list" -l prefix -d 'Prefix of every key, as the scheduler\'s `prefix` option' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand list" -l backend -d 'redis, or valkey: the Valkey flavour, which refuses the idmp strategy' -r -f -a "redis\t''
valkey\t''"
complete -c anarchon -n "__fish_anarchon_using_subcommand list" -s o -l output -d 'Output format, as kubectl\'s -o: table (default), json (as --json), wide (tables are never cut to the terminal\'s width), name (only each row\'s first column: job names for `list`)' -r -f -a "table\t''
json\t''
wide\t''
name\t''"
complete -c anarchon -n "__fish_anarchon_using_subcommand list" -l color -d 'When to use colour: auto (a terminal without NO_COLOR), always, never' -r -f -a "auto\t''
always\t''
never\t''"
complete -c anarchon -n "__fish_anarchon_using_subcommand list" -l time-format -d 'How text output shows times: auto (compact UTC with "3m ago" on a terminal, RFC 3339 with milliseconds when piped), compact (2026-12-02 15:10:00, UTC), rfc3339, or relative (3m ago)' -r -f -a "auto\t''
compact\t''
rfc3339\t''
relative\t''"
complete -c anarchon -n "__fish_anarchon_using_subcommand list" -l connect-timeout -d 'Give up connecting after this long' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand list" -l command-timeout -d 'Give up waiting for one reply after this long' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand list" -l active -d 'List every run in progress across the jobs instead: job, slot, attempt, runner, running for, lease left (or expired)'
complete -c anarchon -n "__fish_anarchon_using_subcommand list" -l unhealthy -d 'Only jobs that need a person: health late, missed or failing, or a run whose lease expired'
complete -c anarchon -n "__fish_anarchon_using_subcommand list" -s w -l watch -d 'Show it again every --interval until interrupted: redrawn in place on a terminal; piped, as `kubectl get -w`, the first round whole, then below a time line only the lines that changed (and `gone:` before a line that is no longer there)'
complete -c anarchon -n "__fish_anarchon_using_subcommand list" -l tls -d 'Connect with TLS (as a rediss:// URL does), with --host or --port'
complete -c anarchon -n "__fish_anarchon_using_subcommand list" -l tls-insecure -d 'Do not verify the server\'s TLS certificate (testing only)'
complete -c anarchon -n "__fish_anarchon_using_subcommand list" -l cluster -d 'Use the Redis Cluster client (also implied by a redis+cluster:// or rediss+cluster:// URL)'
complete -c anarchon -n "__fish_anarchon_using_subcommand list" -l json -d 'Print one JSON document instead of text (stable shape, see docs/guide.md, "JSON output")'
complete -c anarchon -n "__fish_anarchon_using_subcommand list" -l no-headers -d 'Print tables without their header row (for scripts, as kubectl --no-headers)'
complete -c anarchon -n "__fish_anarchon_using_subcommand list" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c anarchon -n "__fish_anarchon_using_subcommand inspect" -l strategy -d 'Which layout to read: lease, or a claim-only strategy [default: whichever exists]' -r -f -a "lease\t''
stream-id\t''
idmp\t''
script\t''"
complete -c anarchon -n "__fish_anarchon_using_subcommand inspect" -l last -d 'How many of the newest runs to show' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand inspect" -l interval -d 'How often --watch (and history --follow) reads the store again' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand inspect" -l redis -d 'Redis or Valkey URL: redis://[user:password@]host:port[/db], rediss:// for TLS, redis+cluster:// for Redis Cluster, redis+sentinel://host:port[,host:port]/<master>[/db] to ask Sentinel for the current primary (after a failover, the new one)' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand inspect" -l host -d 'Host to connect to [default: localhost, or the URL\'s]. --host, --port and --db, like redis-cli\'s, replace those parts of $ANARCHON_REDIS_URL / $REDIS_URL and keep the others' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand inspect" -s p -l port -d 'Port [default: 6379, or the URL\'s]' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand inspect" -s n -l db -d 'Database number [default: 0, or the URL\'s]' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand inspect" -l user -d 'ACL user name (on any URL or --host)' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand inspect" -l password-file -d 'Read the password from the first line of this file (else $ANARCHON_REDIS_PASSWORD). Used when the URL carries none. Never printed' -r -F
complete -c anarchon -n "__fish_anarchon_using_subcommand inspect" -l tls-ca -d 'Trust this PEM CA bundle for TLS instead of the system\'s' -r -F
complete -c anarchon -n "__fish_anarchon_using_subcommand inspect" -l prefix -d 'Prefix of every key, as the scheduler\'s `prefix` option' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand inspect" -l backend -d 'redis, or valkey: the Valkey flavour, which refuses the idmp strategy' -r -f -a "redis\t''
valkey\t''"
complete -c anarchon -n "__fish_anarchon_using_subcommand inspect" -s o -l output -d 'Output format, as kubectl\'s -o: table (default), json (as --json), wide (tables are never cut to the terminal\'s width), name (only each row\'s first column: job names for `list`)' -r -f -a "table\t''
json\t''
wide\t''
name\t''"
complete -c anarchon -n "__fish_anarchon_using_subcommand inspect" -l color -d 'When to use colour: auto (a terminal without NO_COLOR), always, never' -r -f -a "auto\t''
always\t''
never\t''"
complete -c anarchon -n "__fish_anarchon_using_subcommand inspect" -l time-format -d 'How text output shows times: auto (compact UTC with "3m ago" on a terminal, RFC 3339 with milliseconds when piped), compact (2026-12-02 15:10:00, UTC), rfc3339, or relative (3m ago)' -r -f -a "auto\t''
compact\t''
rfc3339\t''
relative\t''"
complete -c anarchon -n "__fish_anarchon_using_subcommand inspect" -l connect-timeout -d 'Give up connecting after this long' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand inspect" -l command-timeout -d 'Give up waiting for one reply after this long' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand inspect" -s w -l watch -d 'Show it again every --interval until interrupted: redrawn in place on a terminal; piped, as `kubectl get -w`, the first round whole, then below a time line only the lines that changed (and `gone:` before a line that is no longer there)'
complete -c anarchon -n "__fish_anarchon_using_subcommand inspect" -l tls -d 'Connect with TLS (as a rediss:// URL does), with --host or --port'
complete -c anarchon -n "__fish_anarchon_using_subcommand inspect" -l tls-insecure -d 'Do not verify the server\'s TLS certificate (testing only)'
complete -c anarchon -n "__fish_anarchon_using_subcommand inspect" -l cluster -d 'Use the Redis Cluster client (also implied by a redis+cluster:// or rediss+cluster:// URL)'
complete -c anarchon -n "__fish_anarchon_using_subcommand inspect" -l json -d 'Print one JSON document instead of text (stable shape, see docs/guide.md, "JSON output")'
complete -c anarchon -n "__fish_anarchon_using_subcommand inspect" -l no-headers -d 'Print tables without their header row (for scripts, as kubectl --no-headers)'
complete -c anarchon -n "__fish_anarchon_using_subcommand inspect" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c anarchon -n "__fish_anarchon_using_subcommand top" -l pattern -d 'Only jobs whose name matches this Redis glob (`*`, `?`, `[abc]`)' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand top" -l interval -d 'How often the store is read again' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand top" -l redis -d 'Redis or Valkey URL: redis://[user:password@]host:port[/db], rediss:// for TLS, redis+cluster:// for Redis Cluster, redis+sentinel://host:port[,host:port]/<master>[/db] to ask Sentinel for the current primary (after a failover, the new one)' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand top" -l host -d 'Host to connect to [default: localhost, or the URL\'s]. --host, --port and --db, like redis-cli\'s, replace those parts of $ANARCHON_REDIS_URL / $REDIS_URL and keep the others' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand top" -s p -l port -d 'Port [default: 6379, or the URL\'s]' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand top" -s n -l db -d 'Database number [default: 0, or the URL\'s]' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand top" -l user -d 'ACL user name (on any URL or --host)' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand top" -l password-file -d 'Read the password from the first line of this file (else $ANARCHON_REDIS_PASSWORD). Used when the URL carries none. Never printed' -r -F
complete -c anarchon -n "__fish_anarchon_using_subcommand top" -l tls-ca -d 'Trust this PEM CA bundle for TLS instead of the system\'s' -r -F
complete -c anarchon -n "__fish_anarchon_using_subcommand top" -l prefix -d 'Prefix of every key, as the scheduler\'s `prefix` option' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand top" -l backend -d 'redis, or valkey: the Valkey flavour, which refuses the idmp strategy' -r -f -a "redis\t''
valkey\t''"
complete -c anarchon -n "__fish_anarchon_using_subcommand top" -s o -l output -d 'Output format, as kubectl\'s -o: table (default), json (as --json), wide (tables are never cut to the terminal\'s width), name (only each row\'s first column: job names for `list`)' -r -f -a "table\t''
json\t''
wide\t''
name\t''"
complete -c anarchon -n "__fish_anarchon_using_subcommand top" -l color -d 'When to use colour: auto (a terminal without NO_COLOR), always, never' -r -f -a "auto\t''
always\t''
never\t''"
complete -c anarchon -n "__fish_anarchon_using_subcommand top" -l time-format -d 'How text output shows times: auto (compact UTC with "3m ago" on a terminal, RFC 3339 with milliseconds when piped), compact (2026-12-02 15:10:00, UTC), rfc3339, or relative (3m ago)' -r -f -a "auto\t''
compact\t''
rfc3339\t''
relative\t''"
complete -c anarchon -n "__fish_anarchon_using_subcommand top" -l connect-timeout -d 'Give up connecting after this long' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand top" -l command-timeout -d 'Give up waiting for one reply after this long' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand top" -l tls -d 'Connect with TLS (as a rediss:// URL does), with --host or --port'
complete -c anarchon -n "__fish_anarchon_using_subcommand top" -l tls-insecure -d 'Do not verify the server\'s TLS certificate (testing only)'
complete -c anarchon -n "__fish_anarchon_using_subcommand top" -l cluster -d 'Use the Redis Cluster client (also implied by a redis+cluster:// or rediss+cluster:// URL)'
complete -c anarchon -n "__fish_anarchon_using_subcommand top" -l json -d 'Print one JSON document instead of text (stable shape, see docs/guide.md, "JSON output")'
complete -c anarchon -n "__fish_anarchon_using_subcommand top" -l no-headers -d 'Print tables without their header row (for scripts, as kubectl --no-headers)'
complete -c anarchon -n "__fish_anarchon_using_subcommand top" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c anarchon -n "__fish_anarchon_using_subcommand next" -l schedule -d 'A cron schedule to show instead of a job\'s: 5 fields, 6 with seconds first, or @hourly style. The store is not read' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand next" -l tz -d 'Time zone of --schedule (IANA name) [default: UTC]' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand next" -s c -l count -d 'How many fire times to show' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand next" -l from -d 'Start here instead of now (RFC 3339, or ms since the epoch): fire times at or after it, and the outage of --after-outage ends here' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand next" -l jitter -d 'The jitter to show instead of the registry\'s (with --schedule: run\'s --jitter)' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand next" -l after-outage -d 'Also show what the first run after an outage of this long (every host down, until --from or now) would run, record skipped, and leave, with --catch-up' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand next" -l catch-up -d 'With --after-outage: the --catch-up window to suppose instead of the registry\'s' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand next" -l catch-up-policy -d 'With --after-outage: the --catch-up-policy to suppose instead of the registry\'s' -r -f -a "all\t'Every missed run, oldest first (at most --catch-up-max, the newest)'
latest\t'Only the newest due run, if it was missed; the older ones are skipped'"
complete -c anarchon -n "__fish_anarchon_using_subcommand next" -l catch-up-max -d 'With --after-outage: --catch-up-max (the registry does not record it) [default: run\'s, 10]' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand next" -l redis -d 'Redis or Valkey URL: redis://[user:password@]host:port[/db], rediss:// for TLS, redis+cluster:// for Redis Cluster, redis+sentinel://host:port[,host:port]/<master>[/db] to ask Sentinel for the current primary (after a failover, the new one)' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand next" -l host -d 'Host to connect to [default: localhost, or the URL\'s]. --host, --port and --db, like redis-cli\'s, replace those parts of $ANARCHON_REDIS_URL / $REDIS_URL and keep the others' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand next" -s p -l port -d 'Port [default: 6379, or the URL\'s]' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand next" -s n -l db -d 'Database number [default: 0, or the URL\'s]' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand next" -l user -d 'ACL user name (on any URL or --host)' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand next" -l password-file -d 'Read the password from the first line of this file (else $ANARCHON_REDIS_PASSWORD). Used when the URL carries none. Never printed' -r -F
complete -c anarchon -n "__fish_anarchon_using_subcommand next" -l tls-ca -d 'Trust this PEM CA bundle for TLS instead of the system\'s' -r -F
complete -c anarchon -n "__fish_anarchon_using_subcommand next" -l prefix -d 'Prefix of every key, as the scheduler\'s `prefix` option' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand next" -l backend -d 'redis, or valkey: the Valkey flavour, which refuses the idmp strategy' -r -f -a "redis\t''
valkey\t''"
complete -c anarchon -n "__fish_anarchon_using_subcommand next" -s o -l output -d 'Output format, as kubectl\'s -o: table (default), json (as --json), wide (tables are never cut to the terminal\'s width), name (only each row\'s first column: job names for `list`)' -r -f -a "table\t''
json\t''
wide\t''
name\t''"
complete -c anarchon -n "__fish_anarchon_using_subcommand next" -l color -d 'When to use colour: auto (a terminal without NO_COLOR), always, never' -r -f -a "auto\t''
always\t''
never\t''"
complete -c anarchon -n "__fish_anarchon_using_subcommand next" -l time-format -d 'How text output shows times: auto (compact UTC with "3m ago" on a terminal, RFC 3339 with milliseconds when piped), compact (2026-12-02 15:10:00, UTC), rfc3339, or relative (3m ago)' -r -f -a "auto\t''
compact\t''
rfc3339\t''
relative\t''"
complete -c anarchon -n "__fish_anarchon_using_subcommand next" -l connect-timeout -d 'Give up connecting after this long' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand next" -l command-timeout -d 'Give up waiting for one reply after this long' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand next" -l tls -d 'Connect with TLS (as a rediss:// URL does), with --host or --port'
complete -c anarchon -n "__fish_anarchon_using_subcommand next" -l tls-insecure -d 'Do not verify the server\'s TLS certificate (testing only)'
complete -c anarchon -n "__fish_anarchon_using_subcommand next" -l cluster -d 'Use the Redis Cluster client (also implied by a redis+cluster:// or rediss+cluster:// URL)'
complete -c anarchon -n "__fish_anarchon_using_subcommand next" -l json -d 'Print one JSON document instead of text (stable shape, see docs/guide.md, "JSON output")'
complete -c anarchon -n "__fish_anarchon_using_subcommand next" -l no-headers -d 'Print tables without their header row (for scripts, as kubectl --no-headers)'
complete -c anarchon -n "__fish_anarchon_using_subcommand next" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c anarchon -n "__fish_anarchon_using_subcommand history" -l runner -d 'Only attempts this runner ran: a runner name (`host-b:977`) or a host (`host-b`)' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand history" -l strategy -d 'Which layout to read: lease, or a claim-only strategy [default: whichever exists]' -r -f -a "lease\t''
stream-id\t''
idmp\t''
script\t''"
complete -c anarchon -n "__fish_anarchon_using_subcommand history" -l since -d 'Only runs whose slot is at or after this: a duration ago (6h) or a time (RFC 3339, ms)' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand history" -l status -d 'Only attempts with this status (`expired`: still marked running, its lease ended, as `list` and `inspect` say)' -r -f -a "running\t''
expired\t''
finished\t''
failed\t''
interrupted\t''
skipped\t''"
complete -c anarchon -n "__fish_anarchon_using_subcommand history" -l last -d 'At most this many entries' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand history" -l interval -d 'How often --watch (and history --follow) reads the store again' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand history" -l redis -d 'Redis or Valkey URL: redis://[user:password@]host:port[/db], rediss:// for TLS, redis+cluster:// for Redis Cluster, redis+sentinel://host:port[,host:port]/<master>[/db] to ask Sentinel for the current primary (after a failover, the new one)' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand history" -l host -d 'Host to connect to [default: localhost, or the URL\'s]. --host, --port and --db, like redis-cli\'s, replace those parts of $ANARCHON_REDIS_URL / $REDIS_URL and keep the others' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand history" -s p -l port -d 'Port [default: 6379, or the URL\'s]' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand history" -s n -l db -d 'Database number [default: 0, or the URL\'s]' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand history" -l user -d 'ACL user name (on any URL or --host)' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand history" -l password-file -d 'Read the password from the first line of this file (else $ANARCHON_REDIS_PASSWORD). Used when the URL carries none. Never printed' -r -F
complete -c anarchon -n "__fish_anarchon_using_subcommand history" -l tls-ca -d 'Trust this PEM CA bundle for TLS instead of the system\'s' -r -F
complete -c anarchon -n "__fish_anarchon_using_subcommand history" -l prefix -d 'Prefix of every key, as the scheduler\'s `prefix` option' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand history" -l backend -d 'redis, or valkey: the Valkey flavour, which refuses the idmp strategy' -r -f -a "redis\t''
valkey\t''"
complete -c anarchon -n "__fish_anarchon_using_subcommand history" -s o -l output -d 'Output format, as kubectl\'s -o: table (default), json (as --json), wide (tables are never cut to the terminal\'s width), name (only each row\'s first column: job names for `list`)' -r -f -a "table\t''
json\t''
wide\t''
name\t''"
complete -c anarchon -n "__fish_anarchon_using_subcommand history" -l color -d 'When to use colour: auto (a terminal without NO_COLOR), always, never' -r -f -a "auto\t''
always\t''
never\t''"
complete -c anarchon -n "__fish_anarchon_using_subcommand history" -l time-format -d 'How text output shows times: auto (compact UTC with "3m ago" on a terminal, RFC 3339 with milliseconds when piped), compact (2026-12-02 15:10:00, UTC), rfc3339, or relative (3m ago)' -r -f -a "auto\t''
compact\t''
rfc3339\t''
relative\t''"
complete -c anarchon -n "__fish_anarchon_using_subcommand history" -l connect-timeout -d 'Give up connecting after this long' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand history" -l command-timeout -d 'Give up waiting for one reply after this long' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand history" -l all -d 'Every job under the prefix, newest first with a JOB column (with --follow: jobs that appear later too). Combine with --since, --status and --runner: "what failed on host-b in the last hour"'
complete -c anarchon -n "__fish_anarchon_using_subcommand history" -s v -l verbose -d 'Add a column with the last line each attempt left on stderr (or why it ended)'
complete -c anarchon -n "__fish_anarchon_using_subcommand history" -l events -d 'The job\'s events instead of its attempts, newest first, at most --last: each run\'s claim, takeover (from which host), end, skip (why), supersession, release or replacement (by whom, why), and every operator\'s release, pause, resume, run-now, trim and migrate (who, when, why: `--reason`)'
complete -c anarchon -n "__fish_anarchon_using_subcommand history" -s f -l follow -d 'Then print each attempt as it ends, until interrupted (like `tail -f`; the store is read every --interval)'
complete -c anarchon -n "__fish_anarchon_using_subcommand history" -s w -l watch -d 'Show it again every --interval until interrupted: redrawn in place on a terminal; piped, as `kubectl get -w`, the first round whole, then below a time line only the lines that changed (and `gone:` before a line that is no longer there)'
complete -c anarchon -n "__fish_anarchon_using_subcommand history" -l tls -d 'Connect with TLS (as a rediss:// URL does), with --host or --port'
complete -c anarchon -n "__fish_anarchon_using_subcommand history" -l tls-insecure -d 'Do not verify the server\'s TLS certificate (testing only)'
complete -c anarchon -n "__fish_anarchon_using_subcommand history" -l cluster -d 'Use the Redis Cluster client (also implied by a redis+cluster:// or rediss+cluster:// URL)'
complete -c anarchon -n "__fish_anarchon_using_subcommand history" -l json -d 'Print one JSON document instead of text (stable shape, see docs/guide.md, "JSON output")'
complete -c anarchon -n "__fish_anarchon_using_subcommand history" -l no-headers -d 'Print tables without their header row (for scripts, as kubectl --no-headers)'
complete -c anarchon -n "__fish_anarchon_using_subcommand history" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c anarchon -n "__fish_anarchon_using_subcommand timeline" -l strategy -d 'Which layout to read: lease, or a claim-only strategy [default: whichever exists]' -r -f -a "lease\t''
stream-id\t''
idmp\t''
script\t''"
complete -c anarchon -n "__fish_anarchon_using_subcommand timeline" -l since -d 'Start of the range: a duration ago (6h) or a time (RFC 3339, ms) [default: an hour before --until]' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand timeline" -l until -d 'End of the range: `now`, a duration ago (30m) or a time (RFC 3339, ms) [default: now]' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand timeline" -l width -d 'How many columns the picture takes [default: the terminal\'s width; 100 when piped]' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand timeline" -l late-after -d 'A run is late when its first claim came more than this after its slot [default: the job\'s --jitter, from the job registry, + 10s]' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand timeline" -l grace -d 'How long after its slot a run may start: a slot of the schedule with no run is drawn missed once this has passed, as `check --grace` judges it [default: the job\'s --max-late + --jitter + 1m, from the job registry]' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand timeline" -l svg -d 'Also write the picture as an SVG document to FILE (`-`: to stdout, instead of the text)' -r -F
complete -c anarchon -n "__fish_anarchon_using_subcommand timeline" -l redis -d 'Redis or Valkey URL: redis://[user:password@]host:port[/db], rediss:// for TLS, redis+cluster:// for Redis Cluster, redis+sentinel://host:port[,host:port]/<master>[/db] to ask Sentinel for the current primary (after a failover, the new one)' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand timeline" -l host -d 'Host to connect to [default: localhost, or the URL\'s]. --host, --port and --db, like redis-cli\'s, replace those parts of $ANARCHON_REDIS_URL / $REDIS_URL and keep the others' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand timeline" -s p -l port -d 'Port [default: 6379, or the URL\'s]' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand timeline" -s n -l db -d 'Database number [default: 0, or the URL\'s]' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand timeline" -l user -d 'ACL user name (on any URL or --host)' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand timeline" -l password-file -d 'Read the password from the first line of this file (else $ANARCHON_REDIS_PASSWORD). Used when the URL carries none. Never printed' -r -F
complete -c anarchon -n "__fish_anarchon_using_subcommand timeline" -l tls-ca -d 'Trust this PEM CA bundle for TLS instead of the system\'s' -r -F
complete -c anarchon -n "__fish_anarchon_using_subcommand timeline" -l prefix -d 'Prefix of every key, as the scheduler\'s `prefix` option' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand timeline" -l backend -d 'redis, or valkey: the Valkey flavour, which refuses the idmp strategy' -r -f -a "redis\t''
valkey\t''"
complete -c anarchon -n "__fish_anarchon_using_subcommand timeline" -s o -l output -d 'Output format, as kubectl\'s -o: table (default), json (as --json), wide (tables are never cut to the terminal\'s width), name (only each row\'s first column: job names for `list`)' -r -f -a "table\t''
json\t''
wide\t''
name\t''"
complete -c anarchon -n "__fish_anarchon_using_subcommand timeline" -l color -d 'When to use colour: auto (a terminal without NO_COLOR), always, never' -r -f -a "auto\t''
always\t''
never\t''"
complete -c anarchon -n "__fish_anarchon_using_subcommand timeline" -l time-format -d 'How text output shows times: auto (compact UTC with "3m ago" on a terminal, RFC 3339 with milliseconds when piped), compact (2026-12-02 15:10:00, UTC), rfc3339, or relative (3m ago)' -r -f -a "auto\t''
compact\t''
rfc3339\t''
relative\t''"
complete -c anarchon -n "__fish_anarchon_using_subcommand timeline" -l connect-timeout -d 'Give up connecting after this long' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand timeline" -l command-timeout -d 'Give up waiting for one reply after this long' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand timeline" -l all -d 'Every job under the prefix that has an attempt in the range, in name order'
complete -c anarchon -n "__fish_anarchon_using_subcommand timeline" -l tls -d 'Connect with TLS (as a rediss:// URL does), with --host or --port'
complete -c anarchon -n "__fish_anarchon_using_subcommand timeline" -l tls-insecure -d 'Do not verify the server\'s TLS certificate (testing only)'
complete -c anarchon -n "__fish_anarchon_using_subcommand timeline" -l cluster -d 'Use the Redis Cluster client (also implied by a redis+cluster:// or rediss+cluster:// URL)'
complete -c anarchon -n "__fish_anarchon_using_subcommand timeline" -l json -d 'Print one JSON document instead of text (stable shape, see docs/guide.md, "JSON output")'
complete -c anarchon -n "__fish_anarchon_using_subcommand timeline" -l no-headers -d 'Print tables without their header row (for scripts, as kubectl --no-headers)'
complete -c anarchon -n "__fish_anarchon_using_subcommand timeline" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c anarchon -n "__fish_anarchon_using_subcommand logs" -l strategy -d 'Which layout to read: lease, or a claim-only strategy [default: whichever exists]' -r -f -a "lease\t''
stream-id\t''
idmp\t''
script\t''"
complete -c anarchon -n "__fish_anarchon_using_subcommand logs" -l slot -d 'Every ended attempt of this run' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand logs" -l last -d 'The newest N ended attempts, whatever their status' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand logs" -l redis -d 'Redis or Valkey URL: redis://[user:password@]host:port[/db], rediss:// for TLS, redis+cluster:// for Redis Cluster, redis+sentinel://host:port[,host:port]/<master>[/db] to ask Sentinel for the current primary (after a failover, the new one)' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand logs" -l host -d 'Host to connect to [default: localhost, or the URL\'s]. --host, --port and --db, like redis-cli\'s, replace those parts of $ANARCHON_REDIS_URL / $REDIS_URL and keep the others' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand logs" -s p -l port -d 'Port [default: 6379, or the URL\'s]' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand logs" -s n -l db -d 'Database number [default: 0, or the URL\'s]' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand logs" -l user -d 'ACL user name (on any URL or --host)' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand logs" -l password-file -d 'Read the password from the first line of this file (else $ANARCHON_REDIS_PASSWORD). Used when the URL carries none. Never printed' -r -F
complete -c anarchon -n "__fish_anarchon_using_subcommand logs" -l tls-ca -d 'Trust this PEM CA bundle for TLS instead of the system\'s' -r -F
complete -c anarchon -n "__fish_anarchon_using_subcommand logs" -l prefix -d 'Prefix of every key, as the scheduler\'s `prefix` option' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand logs" -l backend -d 'redis, or valkey: the Valkey flavour, which refuses the idmp strategy' -r -f -a "redis\t''
valkey\t''"
complete -c anarchon -n "__fish_anarchon_using_subcommand logs" -s o -l output -d 'Output format, as kubectl\'s -o: table (default), json (as --json), wide (tables are never cut to the terminal\'s width), name (only each row\'s first column: job names for `list`)' -r -f -a "table\t''
json\t''
wide\t''
name\t''"
complete -c anarchon -n "__fish_anarchon_using_subcommand logs" -l color -d 'When to use colour: auto (a terminal without NO_COLOR), always, never' -r -f -a "auto\t''
always\t''
never\t''"
complete -c anarchon -n "__fish_anarchon_using_subcommand logs" -l time-format -d 'How text output shows times: auto (compact UTC with "3m ago" on a terminal, RFC 3339 with milliseconds when piped), compact (2026-12-02 15:10:00, UTC), rfc3339, or relative (3m ago)' -r -f -a "auto\t''
compact\t''
rfc3339\t''
relative\t''"
complete -c anarchon -n "__fish_anarchon_using_subcommand logs" -l connect-timeout -d 'Give up connecting after this long' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand logs" -l command-timeout -d 'Give up waiting for one reply after this long' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand logs" -s f -l follow -d 'Follow a run\'s output as its command prints it, from any host, and end with how the run ended (exiting as `wait` does): the newest run in progress, or the run of --slot. Across a takeover it goes on with the next attempt. Needs the run started with `run --live-output` (or `# anarchon: --live-output` in a crontab); `--json`: a JSON line per line of output'
complete -c anarchon -n "__fish_anarchon_using_subcommand logs" -l tls -d 'Connect with TLS (as a rediss:// URL does), with --host or --port'
complete -c anarchon -n "__fish_anarchon_using_subcommand logs" -l tls-insecure -d 'Do not verify the server\'s TLS certificate (testing only)'
complete -c anarchon -n "__fish_anarchon_using_subcommand logs" -l cluster -d 'Use the Redis Cluster client (also implied by a redis+cluster:// or rediss+cluster:// URL)'
complete -c anarchon -n "__fish_anarchon_using_subcommand logs" -l json -d 'Print one JSON document instead of text (stable shape, see docs/guide.md, "JSON output")'
complete -c anarchon -n "__fish_anarchon_using_subcommand logs" -l no-headers -d 'Print tables without their header row (for scripts, as kubectl --no-headers)'
complete -c anarchon -n "__fish_anarchon_using_subcommand logs" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c anarchon -n "__fish_anarchon_using_subcommand wait" -l strategy -d 'Which layout to read: lease, or a claim-only strategy [default: whichever exists]' -r -f -a "lease\t''
stream-id\t''
idmp\t''
script\t''"
complete -c anarchon -n "__fish_anarchon_using_subcommand wait" -l slot -d 'The run to wait for [default: the newest in progress]' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand wait" -l timeout -d 'Give up after this long (exit 124) [default: wait as long as it takes]' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand wait" -l interval -d 'How often the store is read while waiting' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand wait" -l redis -d 'Redis or Valkey URL: redis://[user:password@]host:port[/db], rediss:// for TLS, redis+cluster:// for Redis Cluster, redis+sentinel://host:port[,host:port]/<master>[/db] to ask Sentinel for the current primary (after a failover, the new one)' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand wait" -l host -d 'Host to connect to [default: localhost, or the URL\'s]. --host, --port and --db, like redis-cli\'s, replace those parts of $ANARCHON_REDIS_URL / $REDIS_URL and keep the others' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand wait" -s p -l port -d 'Port [default: 6379, or the URL\'s]' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand wait" -s n -l db -d 'Database number [default: 0, or the URL\'s]' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand wait" -l user -d 'ACL user name (on any URL or --host)' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand wait" -l password-file -d 'Read the password from the first line of this file (else $ANARCHON_REDIS_PASSWORD). Used when the URL carries none. Never printed' -r -F
complete -c anarchon -n "__fish_anarchon_using_subcommand wait" -l tls-ca -d 'Trust this PEM CA bundle for TLS instead of the system\'s' -r -F
complete -c anarchon -n "__fish_anarchon_using_subcommand wait" -l prefix -d 'Prefix of every key, as the scheduler\'s `prefix` option' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand wait" -l backend -d 'redis, or valkey: the Valkey flavour, which refuses the idmp strategy' -r -f -a "redis\t''
valkey\t''"
complete -c anarchon -n "__fish_anarchon_using_subcommand wait" -s o -l output -d 'Output format, as kubectl\'s -o: table (default), json (as --json), wide (tables are never cut to the terminal\'s width), name (only each row\'s first column: job names for `list`)' -r -f -a "table\t''
json\t''
wide\t''
name\t''"
complete -c anarchon -n "__fish_anarchon_using_subcommand wait" -l color -d 'When to use colour: auto (a terminal without NO_COLOR), always, never' -r -f -a "auto\t''
always\t''
never\t''"
complete -c anarchon -n "__fish_anarchon_using_subcommand wait" -l time-format -d 'How text output shows times: auto (compact UTC with "3m ago" on a terminal, RFC 3339 with milliseconds when piped), compact (2026-12-02 15:10:00, UTC), rfc3339, or relative (3m ago)' -r -f -a "auto\t''
compact\t''
rfc3339\t''
relative\t''"
complete -c anarchon -n "__fish_anarchon_using_subcommand wait" -l connect-timeout -d 'Give up connecting after this long' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand wait" -l command-timeout -d 'Give up waiting for one reply after this long' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand wait" -l tls -d 'Connect with TLS (as a rediss:// URL does), with --host or --port'
complete -c anarchon -n "__fish_anarchon_using_subcommand wait" -l tls-insecure -d 'Do not verify the server\'s TLS certificate (testing only)'
complete -c anarchon -n "__fish_anarchon_using_subcommand wait" -l cluster -d 'Use the Redis Cluster client (also implied by a redis+cluster:// or rediss+cluster:// URL)'
complete -c anarchon -n "__fish_anarchon_using_subcommand wait" -l json -d 'Print one JSON document instead of text (stable shape, see docs/guide.md, "JSON output")'
complete -c anarchon -n "__fish_anarchon_using_subcommand wait" -l no-headers -d 'Print tables without their header row (for scripts, as kubectl --no-headers)'
complete -c anarchon -n "__fish_anarchon_using_subcommand wait" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c anarchon -n "__fish_anarchon_using_subcommand trim" -l strategy -d 'Which layout to trim for JOB: lease, or a claim-only strategy [default: whichever exists]' -r -f -a "lease\t''
stream-id\t''
idmp\t''
script\t''"
complete -c anarchon -n "__fish_anarchon_using_subcommand trim" -l keep -d 'Keep about this many runs per job (the scheduler\'s historySize)' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand trim" -l older-than -d 'Also remove runs whose slot is older than this' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand trim" -l protect -d 'Never remove a run younger than this: a late claim could still ask for it [default: what the job\'s claimants recorded (max-late + catch-up + lease x attempts), or 24h when the store does not know; 1h for claim-only jobs]. Shorter than the recorded need is refused' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand trim" -l reason -d 'Why (an incident number, a sentence): recorded in the job\'s events, and where the action keeps one (a pause, a released run\'s result)' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand trim" -l by -d 'Who does it, recorded with it [default: $USER@host:pid]' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand trim" -l redis -d 'Redis or Valkey URL: redis://[user:password@]host:port[/db], rediss:// for TLS, redis+cluster:// for Redis Cluster, redis+sentinel://host:port[,host:port]/<master>[/db] to ask Sentinel for the current primary (after a failover, the new one)' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand trim" -l host -d 'Host to connect to [default: localhost, or the URL\'s]. --host, --port and --db, like redis-cli\'s, replace those parts of $ANARCHON_REDIS_URL / $REDIS_URL and keep the others' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand trim" -s p -l port -d 'Port [default: 6379, or the URL\'s]' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand trim" -s n -l db -d 'Database number [default: 0, or the URL\'s]' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand trim" -l user -d 'ACL user name (on any URL or --host)' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand trim" -l password-file -d 'Read the password from the first line of this file (else $ANARCHON_REDIS_PASSWORD). Used when the URL carries none. Never printed' -r -F
complete -c anarchon -n "__fish_anarchon_using_subcommand trim" -l tls-ca -d 'Trust this PEM CA bundle for TLS instead of the system\'s' -r -F
complete -c anarchon -n "__fish_anarchon_using_subcommand trim" -l prefix -d 'Prefix of every key, as the scheduler\'s `prefix` option' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand trim" -l backend -d 'redis, or valkey: the Valkey flavour, which refuses the idmp strategy' -r -f -a "redis\t''
valkey\t''"
complete -c anarchon -n "__fish_anarchon_using_subcommand trim" -s o -l output -d 'Output format, as kubectl\'s -o: table (default), json (as --json), wide (tables are never cut to the terminal\'s width), name (only each row\'s first column: job names for `list`)' -r -f -a "table\t''
json\t''
wide\t''
name\t''"
complete -c anarchon -n "__fish_anarchon_using_subcommand trim" -l color -d 'When to use colour: auto (a terminal without NO_COLOR), always, never' -r -f -a "auto\t''
always\t''
never\t''"
complete -c anarchon -n "__fish_anarchon_using_subcommand trim" -l time-format -d 'How text output shows times: auto (compact UTC with "3m ago" on a terminal, RFC 3339 with milliseconds when piped), compact (2026-12-02 15:10:00, UTC), rfc3339, or relative (3m ago)' -r -f -a "auto\t''
compact\t''
rfc3339\t''
relative\t''"
complete -c anarchon -n "__fish_anarchon_using_subcommand trim" -l connect-timeout -d 'Give up connecting after this long' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand trim" -l command-timeout -d 'Give up waiting for one reply after this long' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand trim" -l all -d 'Trim every job under the prefix (both layouts)'
complete -c anarchon -n "__fish_anarchon_using_subcommand trim" -l dry-run -d 'Only report what would be removed'
complete -c anarchon -n "__fish_anarchon_using_subcommand trim" -s y -l yes -d 'Do not ask for confirmation (needed when stdin is not a terminal)'
complete -c anarchon -n "__fish_anarchon_using_subcommand trim" -l tls -d 'Connect with TLS (as a rediss:// URL does), with --host or --port'
complete -c anarchon -n "__fish_anarchon_using_subcommand trim" -l tls-insecure -d 'Do not verify the server\'s TLS certificate (testing only)'
complete -c anarchon -n "__fish_anarchon_using_subcommand trim" -l cluster -d 'Use the Redis Cluster client (also implied by a redis+cluster:// or rediss+cluster:// URL)'
complete -c anarchon -n "__fish_anarchon_using_subcommand trim" -l json -d 'Print one JSON document instead of text (stable shape, see docs/guide.md, "JSON output")'
complete -c anarchon -n "__fish_anarchon_using_subcommand trim" -l no-headers -d 'Print tables without their header row (for scripts, as kubectl --no-headers)'
complete -c anarchon -n "__fish_anarchon_using_subcommand trim" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c anarchon -n "__fish_anarchon_using_subcommand release" -l slot -d 'The run to release [default: the job\'s one run in progress]' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand release" -l expired -d 'Release only runs whose lease expired more than DURATION ago (every such run of the job, or of every job with --all): holders that died with nobody standing by' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand release" -l status -d 'How the released attempt is recorded' -r -f -a "interrupted\t'the attempt did not end by itself (the default)'
failed\t'the attempt is recorded as a failure, as a failed command\'s'"
complete -c anarchon -n "__fish_anarchon_using_subcommand release" -l reason -d 'Why (an incident number, a sentence): recorded in the job\'s events, and where the action keeps one (a pause, a released run\'s result)' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand release" -l by -d 'Who does it, recorded with it [default: $USER@host:pid]' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand release" -l redis -d 'Redis or Valkey URL: redis://[user:password@]host:port[/db], rediss:// for TLS, redis+cluster:// for Redis Cluster, redis+sentinel://host:port[,host:port]/<master>[/db] to ask Sentinel for the current primary (after a failover, the new one)' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand release" -l host -d 'Host to connect to [default: localhost, or the URL\'s]. --host, --port and --db, like redis-cli\'s, replace those parts of $ANARCHON_REDIS_URL / $REDIS_URL and keep the others' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand release" -s p -l port -d 'Port [default: 6379, or the URL\'s]' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand release" -s n -l db -d 'Database number [default: 0, or the URL\'s]' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand release" -l user -d 'ACL user name (on any URL or --host)' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand release" -l password-file -d 'Read the password from the first line of this file (else $ANARCHON_REDIS_PASSWORD). Used when the URL carries none. Never printed' -r -F
complete -c anarchon -n "__fish_anarchon_using_subcommand release" -l tls-ca -d 'Trust this PEM CA bundle for TLS instead of the system\'s' -r -F
complete -c anarchon -n "__fish_anarchon_using_subcommand release" -l prefix -d 'Prefix of every key, as the scheduler\'s `prefix` option' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand release" -l backend -d 'redis, or valkey: the Valkey flavour, which refuses the idmp strategy' -r -f -a "redis\t''
valkey\t''"
complete -c anarchon -n "__fish_anarchon_using_subcommand release" -s o -l output -d 'Output format, as kubectl\'s -o: table (default), json (as --json), wide (tables are never cut to the terminal\'s width), name (only each row\'s first column: job names for `list`)' -r -f -a "table\t''
json\t''
wide\t''
name\t''"
complete -c anarchon -n "__fish_anarchon_using_subcommand release" -l color -d 'When to use colour: auto (a terminal without NO_COLOR), always, never' -r -f -a "auto\t''
always\t''
never\t''"
complete -c anarchon -n "__fish_anarchon_using_subcommand release" -l time-format -d 'How text output shows times: auto (compact UTC with "3m ago" on a terminal, RFC 3339 with milliseconds when piped), compact (2026-12-02 15:10:00, UTC), rfc3339, or relative (3m ago)' -r -f -a "auto\t''
compact\t''
rfc3339\t''
relative\t''"
complete -c anarchon -n "__fish_anarchon_using_subcommand release" -l connect-timeout -d 'Give up connecting after this long' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand release" -l command-timeout -d 'Give up waiting for one reply after this long' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand release" -l all -d 'Every lease job (with --expired)'
complete -c anarchon -n "__fish_anarchon_using_subcommand release" -l dry-run -d 'Only show what would be released'
complete -c anarchon -n "__fish_anarchon_using_subcommand release" -l no-wait -d 'Return once the run is marked released, without waiting for its holder to stop it'
complete -c anarchon -n "__fish_anarchon_using_subcommand release" -l force -d 'End the run at once, even under a live lease, without waiting for its holder (as releases did before): the holder may still be running the command when something else runs the job. For holders that cannot be told (another scheduler, an older anarchon)'
complete -c anarchon -n "__fish_anarchon_using_subcommand release" -s y -l yes -d 'Do not ask for confirmation (needed when stdin is not a terminal)'
complete -c anarchon -n "__fish_anarchon_using_subcommand release" -l tls -d 'Connect with TLS (as a rediss:// URL does), with --host or --port'
complete -c anarchon -n "__fish_anarchon_using_subcommand release" -l tls-insecure -d 'Do not verify the server\'s TLS certificate (testing only)'
complete -c anarchon -n "__fish_anarchon_using_subcommand release" -l cluster -d 'Use the Redis Cluster client (also implied by a redis+cluster:// or rediss+cluster:// URL)'
complete -c anarchon -n "__fish_anarchon_using_subcommand release" -l json -d 'Print one JSON document instead of text (stable shape, see docs/guide.md, "JSON output")'
complete -c anarchon -n "__fish_anarchon_using_subcommand release" -l no-headers -d 'Print tables without their header row (for scripts, as kubectl --no-headers)'
complete -c anarchon -n "__fish_anarchon_using_subcommand release" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c anarchon -n "__fish_anarchon_using_subcommand pause" -l until -d 'Until this time (RFC 3339, or ms since the epoch) [default: until `resume`]' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand pause" -l for -d 'For this long from now, by the server\'s clock' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand pause" -l reason -d 'Why (an incident number, a sentence): recorded in the job\'s events, and where the action keeps one (a pause, a released run\'s result)' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand pause" -l by -d 'Who does it, recorded with it [default: $USER@host:pid]' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand pause" -l redis -d 'Redis or Valkey URL: redis://[user:password@]host:port[/db], rediss:// for TLS, redis+cluster:// for Redis Cluster, redis+sentinel://host:port[,host:port]/<master>[/db] to ask Sentinel for the current primary (after a failover, the new one)' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand pause" -l host -d 'Host to connect to [default: localhost, or the URL\'s]. --host, --port and --db, like redis-cli\'s, replace those parts of $ANARCHON_REDIS_URL / $REDIS_URL and keep the others' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand pause" -s p -l port -d 'Port [default: 6379, or the URL\'s]' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand pause" -s n -l db -d 'Database number [default: 0, or the URL\'s]' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand pause" -l user -d 'ACL user name (on any URL or --host)' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand pause" -l password-file -d 'Read the password from the first line of this file (else $ANARCHON_REDIS_PASSWORD). Used when the URL carries none. Never printed' -r -F
complete -c anarchon -n "__fish_anarchon_using_subcommand pause" -l tls-ca -d 'Trust this PEM CA bundle for TLS instead of the system\'s' -r -F
complete -c anarchon -n "__fish_anarchon_using_subcommand pause" -l prefix -d 'Prefix of every key, as the scheduler\'s `prefix` option' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand pause" -l backend -d 'redis, or valkey: the Valkey flavour, which refuses the idmp strategy' -r -f -a "redis\t''
valkey\t''"
complete -c anarchon -n "__fish_anarchon_using_subcommand pause" -s o -l output -d 'Output format, as kubectl\'s -o: table (default), json (as --json), wide (tables are never cut to the terminal\'s width), name (only each row\'s first column: job names for `list`)' -r -f -a "table\t''
json\t''
wide\t''
name\t''"
complete -c anarchon -n "__fish_anarchon_using_subcommand pause" -l color -d 'When to use colour: auto (a terminal without NO_COLOR), always, never' -r -f -a "auto\t''
always\t''
never\t''"
complete -c anarchon -n "__fish_anarchon_using_subcommand pause" -l time-format -d 'How text output shows times: auto (compact UTC with "3m ago" on a terminal, RFC 3339 with milliseconds when piped), compact (2026-12-02 15:10:00, UTC), rfc3339, or relative (3m ago)' -r -f -a "auto\t''
compact\t''
rfc3339\t''
relative\t''"
complete -c anarchon -n "__fish_anarchon_using_subcommand pause" -l connect-timeout -d 'Give up connecting after this long' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand pause" -l command-timeout -d 'Give up waiting for one reply after this long' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand pause" -l tls -d 'Connect with TLS (as a rediss:// URL does), with --host or --port'
complete -c anarchon -n "__fish_anarchon_using_subcommand pause" -l tls-insecure -d 'Do not verify the server\'s TLS certificate (testing only)'
complete -c anarchon -n "__fish_anarchon_using_subcommand pause" -l cluster -d 'Use the Redis Cluster client (also implied by a redis+cluster:// or rediss+cluster:// URL)'
complete -c anarchon -n "__fish_anarchon_using_subcommand pause" -l json -d 'Print one JSON document instead of text (stable shape, see docs/guide.md, "JSON output")'
complete -c anarchon -n "__fish_anarchon_using_subcommand pause" -l no-headers -d 'Print tables without their header row (for scripts, as kubectl --no-headers)'
complete -c anarchon -n "__fish_anarchon_using_subcommand pause" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c anarchon -n "__fish_anarchon_using_subcommand resume" -l reason -d 'Why (an incident number, a sentence): recorded in the job\'s events, and where the action keeps one (a pause, a released run\'s result)' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand resume" -l by -d 'Who does it, recorded with it [default: $USER@host:pid]' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand resume" -l redis -d 'Redis or Valkey URL: redis://[user:password@]host:port[/db], rediss:// for TLS, redis+cluster:// for Redis Cluster, redis+sentinel://host:port[,host:port]/<master>[/db] to ask Sentinel for the current primary (after a failover, the new one)' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand resume" -l host -d 'Host to connect to [default: localhost, or the URL\'s]. --host, --port and --db, like redis-cli\'s, replace those parts of $ANARCHON_REDIS_URL / $REDIS_URL and keep the others' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand resume" -s p -l port -d 'Port [default: 6379, or the URL\'s]' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand resume" -s n -l db -d 'Database number [default: 0, or the URL\'s]' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand resume" -l user -d 'ACL user name (on any URL or --host)' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand resume" -l password-file -d 'Read the password from the first line of this file (else $ANARCHON_REDIS_PASSWORD). Used when the URL carries none. Never printed' -r -F
complete -c anarchon -n "__fish_anarchon_using_subcommand resume" -l tls-ca -d 'Trust this PEM CA bundle for TLS instead of the system\'s' -r -F
complete -c anarchon -n "__fish_anarchon_using_subcommand resume" -l prefix -d 'Prefix of every key, as the scheduler\'s `prefix` option' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand resume" -l backend -d 'redis, or valkey: the Valkey flavour, which refuses the idmp strategy' -r -f -a "redis\t''
valkey\t''"
complete -c anarchon -n "__fish_anarchon_using_subcommand resume" -s o -l output -d 'Output format, as kubectl\'s -o: table (default), json (as --json), wide (tables are never cut to the terminal\'s width), name (only each row\'s first column: job names for `list`)' -r -f -a "table\t''
json\t''
wide\t''
name\t''"
complete -c anarchon -n "__fish_anarchon_using_subcommand resume" -l color -d 'When to use colour: auto (a terminal without NO_COLOR), always, never' -r -f -a "auto\t''
always\t''
never\t''"
complete -c anarchon -n "__fish_anarchon_using_subcommand resume" -l time-format -d 'How text output shows times: auto (compact UTC with "3m ago" on a terminal, RFC 3339 with milliseconds when piped), compact (2026-12-02 15:10:00, UTC), rfc3339, or relative (3m ago)' -r -f -a "auto\t''
compact\t''
rfc3339\t''
relative\t''"
complete -c anarchon -n "__fish_anarchon_using_subcommand resume" -l connect-timeout -d 'Give up connecting after this long' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand resume" -l command-timeout -d 'Give up waiting for one reply after this long' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand resume" -l tls -d 'Connect with TLS (as a rediss:// URL does), with --host or --port'
complete -c anarchon -n "__fish_anarchon_using_subcommand resume" -l tls-insecure -d 'Do not verify the server\'s TLS certificate (testing only)'
complete -c anarchon -n "__fish_anarchon_using_subcommand resume" -l cluster -d 'Use the Redis Cluster client (also implied by a redis+cluster:// or rediss+cluster:// URL)'
complete -c anarchon -n "__fish_anarchon_using_subcommand resume" -l json -d 'Print one JSON document instead of text (stable shape, see docs/guide.md, "JSON output")'
complete -c anarchon -n "__fish_anarchon_using_subcommand resume" -l no-headers -d 'Print tables without their header row (for scripts, as kubectl --no-headers)'
complete -c anarchon -n "__fish_anarchon_using_subcommand resume" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c anarchon -n "__fish_anarchon_using_subcommand calendar; and not __fish_seen_subcommand_from set show list delete help" -l redis -d 'Redis or Valkey URL: redis://[user:password@]host:port[/db], rediss:// for TLS, redis+cluster:// for Redis Cluster, redis+sentinel://host:port[,host:port]/<master>[/db] to ask Sentinel for the current primary (after a failover, the new one)' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand calendar; and not __fish_seen_subcommand_from set show list delete help" -l host -d 'Host to connect to [default: localhost, or the URL\'s]. --host, --port and --db, like redis-cli\'s, replace those parts of $ANARCHON_REDIS_URL / $REDIS_URL and keep the others' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand calendar; and not __fish_seen_subcommand_from set show list delete help" -s p -l port -d 'Port [default: 6379, or the URL\'s]' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand calendar; and not __fish_seen_subcommand_from set show list delete help" -s n -l db -d 'Database number [default: 0, or the URL\'s]' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand calendar; and not __fish_seen_subcommand_from set show list delete help" -l user -d 'ACL user name (on any URL or --host)' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand calendar; and not __fish_seen_subcommand_from set show list delete help" -l password-file -d 'Read the password from the first line of this file (else $ANARCHON_REDIS_PASSWORD). Used when the URL carries none. Never printed' -r -F
complete -c anarchon -n "__fish_anarchon_using_subcommand calendar; and not __fish_seen_subcommand_from set show list delete help" -l tls-ca -d 'Trust this PEM CA bundle for TLS instead of the system\'s' -r -F
complete -c anarchon -n "__fish_anarchon_using_subcommand calendar; and not __fish_seen_subcommand_from set show list delete help" -l prefix -d 'Prefix of every key, as the scheduler\'s `prefix` option' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand calendar; and not __fish_seen_subcommand_from set show list delete help" -l backend -d 'redis, or valkey: the Valkey flavour, which refuses the idmp strategy' -r -f -a "redis\t''
valkey\t''"
complete -c anarchon -n "__fish_anarchon_using_subcommand calendar; and not __fish_seen_subcommand_from set show list delete help" -s o -l output -d 'Output format, as kubectl\'s -o: table (default), json (as --json), wide (tables are never cut to the terminal\'s width), name (only each row\'s first column: job names for `list`)' -r -f -a "table\t''
json\t''
wide\t''
name\t''"
complete -c anarchon -n "__fish_anarchon_using_subcommand calendar; and not __fish_seen_subcommand_from set show list delete help" -l color -d 'When to use colour: auto (a terminal without NO_COLOR), always, never' -r -f -a "auto\t''
always\t''
never\t''"
complete -c anarchon -n "__fish_anarchon_using_subcommand calendar; and not __fish_seen_subcommand_from set show list delete help" -l time-format -d 'How text output shows times: auto (compact UTC with "3m ago" on a terminal, RFC 3339 with milliseconds when piped), compact (2026-12-02 15:10:00, UTC), rfc3339, or relative (3m ago)' -r -f -a "auto\t''
compact\t''
rfc3339\t''
relative\t''"
complete -c anarchon -n "__fish_anarchon_using_subcommand calendar; and not __fish_seen_subcommand_from set show list delete help" -l connect-timeout -d 'Give up connecting after this long' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand calendar; and not __fish_seen_subcommand_from set show list delete help" -l command-timeout -d 'Give up waiting for one reply after this long' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand calendar; and not __fish_seen_subcommand_from set show list delete help" -l tls -d 'Connect with TLS (as a rediss:// URL does), with --host or --port'
complete -c anarchon -n "__fish_anarchon_using_subcommand calendar; and not __fish_seen_subcommand_from set show list delete help" -l tls-insecure -d 'Do not verify the server\'s TLS certificate (testing only)'
complete -c anarchon -n "__fish_anarchon_using_subcommand calendar; and not __fish_seen_subcommand_from set show list delete help" -l cluster -d 'Use the Redis Cluster client (also implied by a redis+cluster:// or rediss+cluster:// URL)'
complete -c anarchon -n "__fish_anarchon_using_subcommand calendar; and not __fish_seen_subcommand_from set show list delete help" -l json -d 'Print one JSON document instead of text (stable shape, see docs/guide.md, "JSON output")'
complete -c anarchon -n "__fish_anarchon_using_subcommand calendar; and not __fish_seen_subcommand_from set show list delete help" -l no-headers -d 'Print tables without their header row (for scripts, as kubectl --no-headers)'
complete -c anarchon -n "__fish_anarchon_using_subcommand calendar; and not __fish_seen_subcommand_from set show list delete help" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c anarchon -n "__fish_anarchon_using_subcommand calendar; and not __fish_seen_subcommand_from set show list delete help" -f -a "set" -d 'Set a calendar\'s windows, replacing what it had (creating it)'
complete -c anarchon -n "__fish_anarchon_using_subcommand calendar; and not __fish_seen_subcommand_from set show list delete help" -f -a "show" -d 'A calendar\'s windows and its edits, newest first'
complete -c anarchon -n "__fish_anarchon_using_subcommand calendar; and not __fish_seen_subcommand_from set show list delete help" -f -a "list" -d 'Every calendar under the prefix, with its windows'
complete -c anarchon -n "__fish_anarchon_using_subcommand calendar; and not __fish_seen_subcommand_from set show list delete help" -f -a "delete" -d 'Delete a calendar: the jobs that name it run every slot again'
complete -c anarchon -n "__fish_anarchon_using_subcommand calendar; and not __fish_seen_subcommand_from set show list delete help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c anarchon -n "__fish_anarchon_using_subcommand calendar; and __fish_seen_subcommand_from set" -l reason -d 'Why (an incident number, a sentence): recorded in the job\'s events, and where the action keeps one (a pause, a released run\'s result)' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand calendar; and __fish_seen_subcommand_from set" -l by -d 'Who does it, recorded with it [default: $USER@host:pid]' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand calendar; and __fish_seen_subcommand_from set" -l redis -d 'Redis or Valkey URL: redis://[user:password@]host:port[/db], rediss:// for TLS, redis+cluster:// for Redis Cluster, redis+sentinel://host:port[,host:port]/<master>[/db] to ask Sentinel for the current primary (after a failover, the new one)' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand calendar; and __fish_seen_subcommand_from set" -l host -d 'Host to connect to [default: localhost, or the URL\'s]. --host, --port and --db, like redis-cli\'s, replace those parts of $ANARCHON_REDIS_URL / $REDIS_URL and keep the others' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand calendar; and __fish_seen_subcommand_from set" -s p -l port -d 'Port [default: 6379, or the URL\'s]' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand calendar; and __fish_seen_subcommand_from set" -s n -l db -d 'Database number [default: 0, or the URL\'s]' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand calendar; and __fish_seen_subcommand_from set" -l user -d 'ACL user name (on any URL or --host)' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand calendar; and __fish_seen_subcommand_from set" -l password-file -d 'Read the password from the first line of this file (else $ANARCHON_REDIS_PASSWORD). Used when the URL carries none. Never printed' -r -F
complete -c anarchon -n "__fish_anarchon_using_subcommand calendar; and __fish_seen_subcommand_from set" -l tls-ca -d 'Trust this PEM CA bundle for TLS instead of the system\'s' -r -F
complete -c anarchon -n "__fish_anarchon_using_subcommand calendar; and __fish_seen_subcommand_from set" -l prefix -d 'Prefix of every key, as the scheduler\'s `prefix` option' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand calendar; and __fish_seen_subcommand_from set" -l backend -d 'redis, or valkey: the Valkey flavour, which refuses the idmp strategy' -r -f -a "redis\t''
valkey\t''"
complete -c anarchon -n "__fish_anarchon_using_subcommand calendar; and __fish_seen_subcommand_from set" -s o -l output -d 'Output format, as kubectl\'s -o: table (default), json (as --json), wide (tables are never cut to the terminal\'s width), name (only each row\'s first column: job names for `list`)' -r -f -a "table\t''
json\t''
wide\t''
name\t''"
complete -c anarchon -n "__fish_anarchon_using_subcommand calendar; and __fish_seen_subcommand_from set" -l color -d 'When to use colour: auto (a terminal without NO_COLOR), always, never' -r -f -a "auto\t''
always\t''
never\t''"
complete -c anarchon -n "__fish_anarchon_using_subcommand calendar; and __fish_seen_subcommand_from set" -l time-format -d 'How text output shows times: auto (compact UTC with "3m ago" on a terminal, RFC 3339 with milliseconds when piped), compact (2026-12-02 15:10:00, UTC), rfc3339, or relative (3m ago)' -r -f -a "auto\t''
compact\t''
rfc3339\t''
relative\t''"
complete -c anarchon -n "__fish_anarchon_using_subcommand calendar; and __fish_seen_subcommand_from set" -l connect-timeout -d 'Give up connecting after this long' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand calendar; and __fish_seen_subcommand_from set" -l command-timeout -d 'Give up waiting for one reply after this long' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand calendar; and __fish_seen_subcommand_from set" -l tls -d 'Connect with TLS (as a rediss:// URL does), with --host or --port'
complete -c anarchon -n "__fish_anarchon_using_subcommand calendar; and __fish_seen_subcommand_from set" -l tls-insecure -d 'Do not verify the server\'s TLS certificate (testing only)'
complete -c anarchon -n "__fish_anarchon_using_subcommand calendar; and __fish_seen_subcommand_from set" -l cluster -d 'Use the Redis Cluster client (also implied by a redis+cluster:// or rediss+cluster:// URL)'
complete -c anarchon -n "__fish_anarchon_using_subcommand calendar; and __fish_seen_subcommand_from set" -l json -d 'Print one JSON document instead of text (stable shape, see docs/guide.md, "JSON output")'
complete -c anarchon -n "__fish_anarchon_using_subcommand calendar; and __fish_seen_subcommand_from set" -l no-headers -d 'Print tables without their header row (for scripts, as kubectl --no-headers)'
complete -c anarchon -n "__fish_anarchon_using_subcommand calendar; and __fish_seen_subcommand_from set" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c anarchon -n "__fish_anarchon_using_subcommand calendar; and __fish_seen_subcommand_from show" -l redis -d 'Redis or Valkey URL: redis://[user:password@]host:port[/db], rediss:// for TLS, redis+cluster:// for Redis Cluster, redis+sentinel://host:port[,host:port]/<master>[/db] to ask Sentinel for the current primary (after a failover, the new one)' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand calendar; and __fish_seen_subcommand_from show" -l host -d 'Host to connect to [default: localhost, or the URL\'s]. --host, --port and --db, like redis-cli\'s, replace those parts of $ANARCHON_REDIS_URL / $REDIS_URL and keep the others' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand calendar; and __fish_seen_subcommand_from show" -s p -l port -d 'Port [default: 6379, or the URL\'s]' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand calendar; and __fish_seen_subcommand_from show" -s n -l db -d 'Database number [default: 0, or the URL\'s]' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand calendar; and __fish_seen_subcommand_from show" -l user -d 'ACL user name (on any URL or --host)' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand calendar; and __fish_seen_subcommand_from show" -l password-file -d 'Read the password from the first line of this file (else $ANARCHON_REDIS_PASSWORD). Used when the URL carries none. Never printed' -r -F
complete -c anarchon -n "__fish_anarchon_using_subcommand calendar; and __fish_seen_subcommand_from show" -l tls-ca -d 'Trust this PEM CA bundle for TLS instead of the system\'s' -r -F
complete -c anarchon -n "__fish_anarchon_using_subcommand calendar; and __fish_seen_subcommand_from show" -l prefix -d 'Prefix of every key, as the scheduler\'s `prefix` option' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand calendar; and __fish_seen_subcommand_from show" -l backend -d 'redis, or valkey: the Valkey flavour, which refuses the idmp strategy' -r -f -a "redis\t''
valkey\t''"
complete -c anarchon -n "__fish_anarchon_using_subcommand calendar; and __fish_seen_subcommand_from show" -s o -l output -d 'Output format, as kubectl\'s -o: table (default), json (as --json), wide (tables are never cut to the terminal\'s width), name (only each row\'s first column: job names for `list`)' -r -f -a "table\t''
json\t''
wide\t''
name\t''"
complete -c anarchon -n "__fish_anarchon_using_subcommand calendar; and __fish_seen_subcommand_from show" -l color -d 'When to use colour: auto (a terminal without NO_COLOR), always, never' -r -f -a "auto\t''
always\t''
never\t''"
complete -c anarchon -n "__fish_anarchon_using_subcommand calendar; and __fish_seen_subcommand_from show" -l time-format -d 'How text output shows times: auto (compact UTC with "3m ago" on a terminal, RFC 3339 with milliseconds when piped), compact (2026-12-02 15:10:00, UTC), rfc3339, or relative (3m ago)' -r -f -a "auto\t''
compact\t''
rfc3339\t''
relative\t''"
complete -c anarchon -n "__fish_anarchon_using_subcommand calendar; and __fish_seen_subcommand_from show" -l connect-timeout -d 'Give up connecting after this long' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand calendar; and __fish_seen_subcommand_from show" -l command-timeout -d 'Give up waiting for one reply after this long' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand calendar; and __fish_seen_subcommand_from show" -l tls -d 'Connect with TLS (as a rediss:// URL does), with --host or --port'
complete -c anarchon -n "__fish_anarchon_using_subcommand calendar; and __fish_seen_subcommand_from show" -l tls-insecure -d 'Do not verify the server\'s TLS certificate (testing only)'
complete -c anarchon -n "__fish_anarchon_using_subcommand calendar; and __fish_seen_subcommand_from show" -l cluster -d 'Use the Redis Cluster client (also implied by a redis+cluster:// or rediss+cluster:// URL)'
complete -c anarchon -n "__fish_anarchon_using_subcommand calendar; and __fish_seen_subcommand_from show" -l json -d 'Print one JSON document instead of text (stable shape, see docs/guide.md, "JSON output")'
complete -c anarchon -n "__fish_anarchon_using_subcommand calendar; and __fish_seen_subcommand_from show" -l no-headers -d 'Print tables without their header row (for scripts, as kubectl --no-headers)'
complete -c anarchon -n "__fish_anarchon_using_subcommand calendar; and __fish_seen_subcommand_from show" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c anarchon -n "__fish_anarchon_using_subcommand calendar; and __fish_seen_subcommand_from list" -l redis -d 'Redis or Valkey URL: redis://[user:password@]host:port[/db], rediss:// for TLS, redis+cluster:// for Redis Cluster, redis+sentinel://host:port[,host:port]/<master>[/db] to ask Sentinel for the current primary (after a failover, the new one)' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand calendar; and __fish_seen_subcommand_from list" -l host -d 'Host to connect to [default: localhost, or the URL\'s]. --host, --port and --db, like redis-cli\'s, replace those parts of $ANARCHON_REDIS_URL / $REDIS_URL and keep the others' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand calendar; and __fish_seen_subcommand_from list" -s p -l port -d 'Port [default: 6379, or the URL\'s]' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand calendar; and __fish_seen_subcommand_from list" -s n -l db -d 'Database number [default: 0, or the URL\'s]' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand calendar; and __fish_seen_subcommand_from list" -l user -d 'ACL user name (on any URL or --host)' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand calendar; and __fish_seen_subcommand_from list" -l password-file -d 'Read the password from the first line of this file (else $ANARCHON_REDIS_PASSWORD). Used when the URL carries none. Never printed' -r -F
complete -c anarchon -n "__fish_anarchon_using_subcommand calendar; and __fish_seen_subcommand_from list" -l tls-ca -d 'Trust this PEM CA bundle for TLS instead of the system\'s' -r -F
complete -c anarchon -n "__fish_anarchon_using_subcommand calendar; and __fish_seen_subcommand_from list" -l prefix -d 'Prefix of every key, as the scheduler\'s `prefix` option' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand calendar; and __fish_seen_subcommand_from list" -l backend -d 'redis, or valkey: the Valkey flavour, which refuses the idmp strategy' -r -f -a "redis\t''
valkey\t''"
complete -c anarchon -n "__fish_anarchon_using_subcommand calendar; and __fish_seen_subcommand_from list" -s o -l output -d 'Output format, as kubectl\'s -o: table (default), json (as --json), wide (tables are never cut to the terminal\'s width), name (only each row\'s first column: job names for `list`)' -r -f -a "table\t''
json\t''
wide\t''
name\t''"
complete -c anarchon -n "__fish_anarchon_using_subcommand calendar; and __fish_seen_subcommand_from list" -l color -d 'When to use colour: auto (a terminal without NO_COLOR), always, never' -r -f -a "auto\t''
always\t''
never\t''"
complete -c anarchon -n "__fish_anarchon_using_subcommand calendar; and __fish_seen_subcommand_from list" -l time-format -d 'How text output shows times: auto (compact UTC with "3m ago" on a terminal, RFC 3339 with milliseconds when piped), compact (2026-12-02 15:10:00, UTC), rfc3339, or relative (3m ago)' -r -f -a "auto\t''
compact\t''
rfc3339\t''
relative\t''"
complete -c anarchon -n "__fish_anarchon_using_subcommand calendar; and __fish_seen_subcommand_from list" -l connect-timeout -d 'Give up connecting after this long' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand calendar; and __fish_seen_subcommand_from list" -l command-timeout -d 'Give up waiting for one reply after this long' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand calendar; and __fish_seen_subcommand_from list" -l tls -d 'Connect with TLS (as a rediss:// URL does), with --host or --port'
complete -c anarchon -n "__fish_anarchon_using_subcommand calendar; and __fish_seen_subcommand_from list" -l tls-insecure -d 'Do not verify the server\'s TLS certificate (testing only)'
complete -c anarchon -n "__fish_anarchon_using_subcommand calendar; and __fish_seen_subcommand_from list" -l cluster -d 'Use the Redis Cluster client (also implied by a redis+cluster:// or rediss+cluster:// URL)'
complete -c anarchon -n "__fish_anarchon_using_subcommand calendar; and __fish_seen_subcommand_from list" -l json -d 'Print one JSON document instead of text (stable shape, see docs/guide.md, "JSON output")'
complete -c anarchon -n "__fish_anarchon_using_subcommand calendar; and __fish_seen_subcommand_from list" -l no-headers -d 'Print tables without their header row (for scripts, as kubectl --no-headers)'
complete -c anarchon -n "__fish_anarchon_using_subcommand calendar; and __fish_seen_subcommand_from list" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c anarchon -n "__fish_anarchon_using_subcommand calendar; and __fish_seen_subcommand_from delete" -l reason -d 'Why (an incident number, a sentence): recorded in the job\'s events, and where the action keeps one (a pause, a released run\'s result)' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand calendar; and __fish_seen_subcommand_from delete" -l by -d 'Who does it, recorded with it [default: $USER@host:pid]' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand calendar; and __fish_seen_subcommand_from delete" -l redis -d 'Redis or Valkey URL: redis://[user:password@]host:port[/db], rediss:// for TLS, redis+cluster:// for Redis Cluster, redis+sentinel://host:port[,host:port]/<master>[/db] to ask Sentinel for the current primary (after a failover, the new one)' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand calendar; and __fish_seen_subcommand_from delete" -l host -d 'Host to connect to [default: localhost, or the URL\'s]. --host, --port and --db, like redis-cli\'s, replace those parts of $ANARCHON_REDIS_URL / $REDIS_URL and keep the others' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand calendar; and __fish_seen_subcommand_from delete" -s p -l port -d 'Port [default: 6379, or the URL\'s]' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand calendar; and __fish_seen_subcommand_from delete" -s n -l db -d 'Database number [default: 0, or the URL\'s]' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand calendar; and __fish_seen_subcommand_from delete" -l user -d 'ACL user name (on any URL or --host)' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand calendar; and __fish_seen_subcommand_from delete" -l password-file -d 'Read the password from the first line of this file (else $ANARCHON_REDIS_PASSWORD). Used when the URL carries none. Never printed' -r -F
complete -c anarchon -n "__fish_anarchon_using_subcommand calendar; and __fish_seen_subcommand_from delete" -l tls-ca -d 'Trust this PEM CA bundle for TLS instead of the system\'s' -r -F
complete -c anarchon -n "__fish_anarchon_using_subcommand calendar; and __fish_seen_subcommand_from delete" -l prefix -d 'Prefix of every key, as the scheduler\'s `prefix` option' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand calendar; and __fish_seen_subcommand_from delete" -l backend -d 'redis, or valkey: the Valkey flavour, which refuses the idmp strategy' -r -f -a "redis\t''
valkey\t''"
complete -c anarchon -n "__fish_anarchon_using_subcommand calendar; and __fish_seen_subcommand_from delete" -s o -l output -d 'Output format, as kubectl\'s -o: table (default), json (as --json), wide (tables are never cut to the terminal\'s width), name (only each row\'s first column: job names for `list`)' -r -f -a "table\t''
json\t''
wide\t''
name\t''"
complete -c anarchon -n "__fish_anarchon_using_subcommand calendar; and __fish_seen_subcommand_from delete" -l color -d 'When to use colour: auto (a terminal without NO_COLOR), always, never' -r -f -a "auto\t''
always\t''
never\t''"
complete -c anarchon -n "__fish_anarchon_using_subcommand calendar; and __fish_seen_subcommand_from delete" -l time-format -d 'How text output shows times: auto (compact UTC with "3m ago" on a terminal, RFC 3339 with milliseconds when piped), compact (2026-12-02 15:10:00, UTC), rfc3339, or relative (3m ago)' -r -f -a "auto\t''
compact\t''
rfc3339\t''
relative\t''"
complete -c anarchon -n "__fish_anarchon_using_subcommand calendar; and __fish_seen_subcommand_from delete" -l connect-timeout -d 'Give up connecting after this long' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand calendar; and __fish_seen_subcommand_from delete" -l command-timeout -d 'Give up waiting for one reply after this long' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand calendar; and __fish_seen_subcommand_from delete" -l tls -d 'Connect with TLS (as a rediss:// URL does), with --host or --port'
complete -c anarchon -n "__fish_anarchon_using_subcommand calendar; and __fish_seen_subcommand_from delete" -l tls-insecure -d 'Do not verify the server\'s TLS certificate (testing only)'
complete -c anarchon -n "__fish_anarchon_using_subcommand calendar; and __fish_seen_subcommand_from delete" -l cluster -d 'Use the Redis Cluster client (also implied by a redis+cluster:// or rediss+cluster:// URL)'
complete -c anarchon -n "__fish_anarchon_using_subcommand calendar; and __fish_seen_subcommand_from delete" -l json -d 'Print one JSON document instead of text (stable shape, see docs/guide.md, "JSON output")'
complete -c anarchon -n "__fish_anarchon_using_subcommand calendar; and __fish_seen_subcommand_from delete" -l no-headers -d 'Print tables without their header row (for scripts, as kubectl --no-headers)'
complete -c anarchon -n "__fish_anarchon_using_subcommand calendar; and __fish_seen_subcommand_from delete" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c anarchon -n "__fish_anarchon_using_subcommand calendar; and __fish_seen_subcommand_from help" -f -a "set" -d 'Set a calendar\'s windows, replacing what it had (creating it)'
complete -c anarchon -n "__fish_anarchon_using_subcommand calendar; and __fish_seen_subcommand_from help" -f -a "show" -d 'A calendar\'s windows and its edits, newest first'
complete -c anarchon -n "__fish_anarchon_using_subcommand calendar; and __fish_seen_subcommand_from help" -f -a "list" -d 'Every calendar under the prefix, with its windows'
complete -c anarchon -n "__fish_anarchon_using_subcommand calendar; and __fish_seen_subcommand_from help" -f -a "delete" -d 'Delete a calendar: the jobs that name it run every slot again'
complete -c anarchon -n "__fish_anarchon_using_subcommand calendar; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c anarchon -n "__fish_anarchon_using_subcommand forget" -l reason -d 'Why (an incident number, a sentence): recorded in the job\'s events, and where the action keeps one (a pause, a released run\'s result)' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand forget" -l by -d 'Who does it, recorded with it [default: $USER@host:pid]' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand forget" -l redis -d 'Redis or Valkey URL: redis://[user:password@]host:port[/db], rediss:// for TLS, redis+cluster:// for Redis Cluster, redis+sentinel://host:port[,host:port]/<master>[/db] to ask Sentinel for the current primary (after a failover, the new one)' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand forget" -l host -d 'Host to connect to [default: localhost, or the URL\'s]. --host, --port and --db, like redis-cli\'s, replace those parts of $ANARCHON_REDIS_URL / $REDIS_URL and keep the others' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand forget" -s p -l port -d 'Port [default: 6379, or the URL\'s]' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand forget" -s n -l db -d 'Database number [default: 0, or the URL\'s]' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand forget" -l user -d 'ACL user name (on any URL or --host)' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand forget" -l password-file -d 'Read the password from the first line of this file (else $ANARCHON_REDIS_PASSWORD). Used when the URL carries none. Never printed' -r -F
complete -c anarchon -n "__fish_anarchon_using_subcommand forget" -l tls-ca -d 'Trust this PEM CA bundle for TLS instead of the system\'s' -r -F
complete -c anarchon -n "__fish_anarchon_using_subcommand forget" -l prefix -d 'Prefix of every key, as the scheduler\'s `prefix` option' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand forget" -l backend -d 'redis, or valkey: the Valkey flavour, which refuses the idmp strategy' -r -f -a "redis\t''
valkey\t''"
complete -c anarchon -n "__fish_anarchon_using_subcommand forget" -s o -l output -d 'Output format, as kubectl\'s -o: table (default), json (as --json), wide (tables are never cut to the terminal\'s width), name (only each row\'s first column: job names for `list`)' -r -f -a "table\t''
json\t''
wide\t''
name\t''"
complete -c anarchon -n "__fish_anarchon_using_subcommand forget" -l color -d 'When to use colour: auto (a terminal without NO_COLOR), always, never' -r -f -a "auto\t''
always\t''
never\t''"
complete -c anarchon -n "__fish_anarchon_using_subcommand forget" -l time-format -d 'How text output shows times: auto (compact UTC with "3m ago" on a terminal, RFC 3339 with milliseconds when piped), compact (2026-12-02 15:10:00, UTC), rfc3339, or relative (3m ago)' -r -f -a "auto\t''
compact\t''
rfc3339\t''
relative\t''"
complete -c anarchon -n "__fish_anarchon_using_subcommand forget" -l connect-timeout -d 'Give up connecting after this long' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand forget" -l command-timeout -d 'Give up waiting for one reply after this long' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand forget" -l drop-history -d 'Also delete the job\'s history and state (its runs, results and pause); its registry and events stay, as the record of the retirement'
complete -c anarchon -n "__fish_anarchon_using_subcommand forget" -l dry-run -d 'Say what would be done, and do nothing'
complete -c anarchon -n "__fish_anarchon_using_subcommand forget" -s y -l yes -d 'Do not ask for confirmation (needed when stdin is not a terminal)'
complete -c anarchon -n "__fish_anarchon_using_subcommand forget" -l tls -d 'Connect with TLS (as a rediss:// URL does), with --host or --port'
complete -c anarchon -n "__fish_anarchon_using_subcommand forget" -l tls-insecure -d 'Do not verify the server\'s TLS certificate (testing only)'
complete -c anarchon -n "__fish_anarchon_using_subcommand forget" -l cluster -d 'Use the Redis Cluster client (also implied by a redis+cluster:// or rediss+cluster:// URL)'
complete -c anarchon -n "__fish_anarchon_using_subcommand forget" -l json -d 'Print one JSON document instead of text (stable shape, see docs/guide.md, "JSON output")'
complete -c anarchon -n "__fish_anarchon_using_subcommand forget" -l no-headers -d 'Print tables without their header row (for scripts, as kubectl --no-headers)'
complete -c anarchon -n "__fish_anarchon_using_subcommand forget" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c anarchon -n "__fish_anarchon_using_subcommand migrate" -l to -d 'The store format to move to: 2 (anarchon\'s own), or 1 (the seed\'s, which every scheduler reads)' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand migrate" -l reason -d 'Why (an incident number, a sentence): recorded in the job\'s events, and where the action keeps one (a pause, a released run\'s result)' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand migrate" -l by -d 'Who does it, recorded with it [default: $USER@host:pid]' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand migrate" -l redis -d 'Redis or Valkey URL: redis://[user:password@]host:port[/db], rediss:// for TLS, redis+cluster:// for Redis Cluster, redis+sentinel://host:port[,host:port]/<master>[/db] to ask Sentinel for the current primary (after a failover, the new one)' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand migrate" -l host -d 'Host to connect to [default: localhost, or the URL\'s]. --host, --port and --db, like redis-cli\'s, replace those parts of $ANARCHON_REDIS_URL / $REDIS_URL and keep the others' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand migrate" -s p -l port -d 'Port [default: 6379, or the URL\'s]' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand migrate" -s n -l db -d 'Database number [default: 0, or the URL\'s]' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand migrate" -l user -d 'ACL user name (on any URL or --host)' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand migrate" -l password-file -d 'Read the password from the first line of this file (else $ANARCHON_REDIS_PASSWORD). Used when the URL carries none. Never printed' -r -F
complete -c anarchon -n "__fish_anarchon_using_subcommand migrate" -l tls-ca -d 'Trust this PEM CA bundle for TLS instead of the system\'s' -r -F
complete -c anarchon -n "__fish_anarchon_using_subcommand migrate" -l prefix -d 'Prefix of every key, as the scheduler\'s `prefix` option' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand migrate" -l backend -d 'redis, or valkey: the Valkey flavour, which refuses the idmp strategy' -r -f -a "redis\t''
valkey\t''"
complete -c anarchon -n "__fish_anarchon_using_subcommand migrate" -s o -l output -d 'Output format, as kubectl\'s -o: table (default), json (as --json), wide (tables are never cut to the terminal\'s width), name (only each row\'s first column: job names for `list`)' -r -f -a "table\t''
json\t''
wide\t''
name\t''"
complete -c anarchon -n "__fish_anarchon_using_subcommand migrate" -l color -d 'When to use colour: auto (a terminal without NO_COLOR), always, never' -r -f -a "auto\t''
always\t''
never\t''"
complete -c anarchon -n "__fish_anarchon_using_subcommand migrate" -l time-format -d 'How text output shows times: auto (compact UTC with "3m ago" on a terminal, RFC 3339 with milliseconds when piped), compact (2026-12-02 15:10:00, UTC), rfc3339, or relative (3m ago)' -r -f -a "auto\t''
compact\t''
rfc3339\t''
relative\t''"
complete -c anarchon -n "__fish_anarchon_using_subcommand migrate" -l connect-timeout -d 'Give up connecting after this long' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand migrate" -l command-timeout -d 'Give up waiting for one reply after this long' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand migrate" -l dry-run -d 'Only report what would change'
complete -c anarchon -n "__fish_anarchon_using_subcommand migrate" -s y -l yes -d 'Do not ask for confirmation (needed when stdin is not a terminal)'
complete -c anarchon -n "__fish_anarchon_using_subcommand migrate" -l tls -d 'Connect with TLS (as a rediss:// URL does), with --host or --port'
complete -c anarchon -n "__fish_anarchon_using_subcommand migrate" -l tls-insecure -d 'Do not verify the server\'s TLS certificate (testing only)'
complete -c anarchon -n "__fish_anarchon_using_subcommand migrate" -l cluster -d 'Use the Redis Cluster client (also implied by a redis+cluster:// or rediss+cluster:// URL)'
complete -c anarchon -n "__fish_anarchon_using_subcommand migrate" -l json -d 'Print one JSON document instead of text (stable shape, see docs/guide.md, "JSON output")'
complete -c anarchon -n "__fish_anarchon_using_subcommand migrate" -l no-headers -d 'Print tables without their header row (for scripts, as kubectl --no-headers)'
complete -c anarchon -n "__fish_anarchon_using_subcommand migrate" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c anarchon -n "__fish_anarchon_using_subcommand run-now" -l strategy -d 'lease (default): leases, backups, overlap protection, retries. stream-id, idmp, script: claim-only strategies that only decide who runs (see docs/guide.md, "Strategies")' -r -f -a "lease\t''
stream-id\t''
idmp\t''
script\t''"
complete -c anarchon -n "__fish_anarchon_using_subcommand run-now" -l window -d 'script strategy: how long a claimed run is remembered; must exceed --max-late [default: 5m]' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand run-now" -l idmp-duration -d 'idmp strategy: seconds Redis remembers a run\'s idempotency ID (1..86400) [default: 300]' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand run-now" -l idmp-max-size -d 'idmp strategy: run IDs Redis keeps per job (1..10000) [default: 1000]' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand run-now" -l lease -d 'How long a claim holds the run without a heartbeat [default: 30s]' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand run-now" -l max-attempts -d 'Attempts in all: after a holder\'s lease expires, a new claim takes attempt+1 until this many [default: 3]. An attempt handed over (a replica of `cron` shutting down) is not counted (up to 10 such)' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand run-now" -l overlap -d 'What a slot does while an older run of the job holds a live lease: forbid (skip it), allow (run both), replace (stop the older one first), buffer (run it when the older one ends) [default: forbid]' -r -f -a "forbid\t'Skip the new slot while an older run holds the job (recorded skipped)'
allow\t'Run the new slot beside the older run'
replace\t'Stop the older run (as `anarchon release` does), then run the new slot (`run` only)'
buffer\t'Run the new slot as soon as the older run ends, within --max-late; one slot waits at most, a further one is recorded skipped (`run` only)'"
complete -c anarchon -n "__fish_anarchon_using_subcommand run-now" -l runner -d 'Who is claiming, recorded in the run (default host:pid)' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand run-now" -l history-size -d 'Keep about this many runs of history per job (the scheduler\'s historySize) [default: 1000]' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand run-now" -l history-ttl -d 'Also drop history older than this (the scheduler\'s historyTtlMs)' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand run-now" -l heartbeat -d 'Heartbeat interval while the command runs (default: a third of --lease)' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand run-now" -l on-lease-lost -d 'What to do with the command when the lease is lost: terminate it, or let it continue [default: terminate]' -r -f -a "terminate\t''
continue\t''"
complete -c anarchon -n "__fish_anarchon_using_subcommand run-now" -l kill-after -d 'Grace between SIGTERM and SIGKILL when anarchon stops the command' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand run-now" -l timeout -d 'Stop the command after this long and record it as failed (exit 124)' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand run-now" -l live-output-lines -d 'With --live-output: the most lines of an attempt\'s output sent to the store; the rest is printed here as usual but not sent' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand run-now" -l reason -d 'Why (an incident number, a sentence): recorded in the job\'s events, and where the action keeps one (a pause, a released run\'s result)' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand run-now" -l by -d 'Who does it, recorded with it [default: $USER@host:pid]' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand run-now" -l redis -d 'Redis or Valkey URL: redis://[user:password@]host:port[/db], rediss:// for TLS, redis+cluster:// for Redis Cluster, redis+sentinel://host:port[,host:port]/<master>[/db] to ask Sentinel for the current primary (after a failover, the new one)' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand run-now" -l host -d 'Host to connect to [default: localhost, or the URL\'s]. --host, --port and --db, like redis-cli\'s, replace those parts of $ANARCHON_REDIS_URL / $REDIS_URL and keep the others' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand run-now" -s p -l port -d 'Port [default: 6379, or the URL\'s]' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand run-now" -s n -l db -d 'Database number [default: 0, or the URL\'s]' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand run-now" -l user -d 'ACL user name (on any URL or --host)' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand run-now" -l password-file -d 'Read the password from the first line of this file (else $ANARCHON_REDIS_PASSWORD). Used when the URL carries none. Never printed' -r -F
complete -c anarchon -n "__fish_anarchon_using_subcommand run-now" -l tls-ca -d 'Trust this PEM CA bundle for TLS instead of the system\'s' -r -F
complete -c anarchon -n "__fish_anarchon_using_subcommand run-now" -l prefix -d 'Prefix of every key, as the scheduler\'s `prefix` option' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand run-now" -l backend -d 'redis, or valkey: the Valkey flavour, which refuses the idmp strategy' -r -f -a "redis\t''
valkey\t''"
complete -c anarchon -n "__fish_anarchon_using_subcommand run-now" -s o -l output -d 'Output format, as kubectl\'s -o: table (default), json (as --json), wide (tables are never cut to the terminal\'s width), name (only each row\'s first column: job names for `list`)' -r -f -a "table\t''
json\t''
wide\t''
name\t''"
complete -c anarchon -n "__fish_anarchon_using_subcommand run-now" -l color -d 'When to use colour: auto (a terminal without NO_COLOR), always, never' -r -f -a "auto\t''
always\t''
never\t''"
complete -c anarchon -n "__fish_anarchon_using_subcommand run-now" -l time-format -d 'How text output shows times: auto (compact UTC with "3m ago" on a terminal, RFC 3339 with milliseconds when piped), compact (2026-12-02 15:10:00, UTC), rfc3339, or relative (3m ago)' -r -f -a "auto\t''
compact\t''
rfc3339\t''
relative\t''"
complete -c anarchon -n "__fish_anarchon_using_subcommand run-now" -l connect-timeout -d 'Give up connecting after this long' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand run-now" -l command-timeout -d 'Give up waiting for one reply after this long' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand run-now" -l new -d 'Create the job if the store does not know it yet. Needed only on a terminal (a person\'s typo must not create a job); scripts create jobs as they run them'
complete -c anarchon -n "__fish_anarchon_using_subcommand run-now" -l shell -d 'Run the command line with /bin/sh -c (the words after -- joined by spaces)'
complete -c anarchon -n "__fish_anarchon_using_subcommand run-now" -l foreground -d 'Keep the command in anarchon\'s process group, so it can read from the terminal (as `timeout --foreground`). Signals then reach the command alone, not its children'
complete -c anarchon -n "__fish_anarchon_using_subcommand run-now" -l leave-children -d 'Let processes the command started in the background run on after it exits. By default, as systemd\'s KillMode=control-group, what the command leaves in its process group when it exits is stopped (SIGTERM, SIGKILL after --kill-after) before the run is recorded ended: a child left running would overlap the job\'s next run'
complete -c anarchon -n "__fish_anarchon_using_subcommand run-now" -l keep-stdout -d 'Keep the last 4 KiB of the command\'s stdout in its result (`stdout_tail`, shown by `logs` and `history -v`), as its stderr is always kept: for jobs that report on stdout. The command\'s stdout then goes through a pipe (it is still printed as it comes), so a command that asks whether its stdout is a terminal hears no'
complete -c anarchon -n "__fish_anarchon_using_subcommand run-now" -l live-output -d 'Send the command\'s output to the store as it prints, line by line, so that `anarchon logs -f JOB` follows it from any host while it runs (and for a day after, or the job\'s --history-ttl if shorter). At most --live-output-lines lines per attempt. Its stdout then goes through a pipe, as with --keep-stdout. Off by default: a run costs the server nothing more without it'
complete -c anarchon -n "__fish_anarchon_using_subcommand run-now" -s q -l quiet -d 'No progress or notes on stderr; errors and lost leases are still reported'
complete -c anarchon -n "__fish_anarchon_using_subcommand run-now" -l claim-only -d 'Only claim the manual run, here, and print its slot and token for `heartbeat` and `finish` by hand (the lease protocol), instead of asking a replica of `anarchon cron` to run it'
complete -c anarchon -n "__fish_anarchon_using_subcommand run-now" -l wait -d 'On a replica: wait for the run to end and exit as `anarchon wait` does (0 when it finished; its command\'s exit code when it failed)'
complete -c anarchon -n "__fish_anarchon_using_subcommand run-now" -l tls -d 'Connect with TLS (as a rediss:// URL does), with --host or --port'
complete -c anarchon -n "__fish_anarchon_using_subcommand run-now" -l tls-insecure -d 'Do not verify the server\'s TLS certificate (testing only)'
complete -c anarchon -n "__fish_anarchon_using_subcommand run-now" -l cluster -d 'Use the Redis Cluster client (also implied by a redis+cluster:// or rediss+cluster:// URL)'
complete -c anarchon -n "__fish_anarchon_using_subcommand run-now" -l json -d 'Print one JSON document instead of text (stable shape, see docs/guide.md, "JSON output")'
complete -c anarchon -n "__fish_anarchon_using_subcommand run-now" -l no-headers -d 'Print tables without their header row (for scripts, as kubectl --no-headers)'
complete -c anarchon -n "__fish_anarchon_using_subcommand run-now" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c anarchon -n "__fish_anarchon_using_subcommand check" -l grace -d 'How long after its slot a run may start before it counts as late [default: the job\'s --max-late + --jitter + 1m, from the job registry]' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand check" -l failures -d 'CRITICAL once this many runs in a row failed (fewer: WARNING)' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand check" -l window -d 'Look at every slot due in the last DURATION for runs missed or lost (claimed but never run to an end) [default: the newest 10 due slots]. For a check run less often than the job, or after an incident: "did we lose a run in the last 6h?"' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand check" -l redis -d 'Redis or Valkey URL: redis://[user:password@]host:port[/db], rediss:// for TLS, redis+cluster:// for Redis Cluster, redis+sentinel://host:port[,host:port]/<master>[/db] to ask Sentinel for the current primary (after a failover, the new one)' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand check" -l host -d 'Host to connect to [default: localhost, or the URL\'s]. --host, --port and --db, like redis-cli\'s, replace those parts of $ANARCHON_REDIS_URL / $REDIS_URL and keep the others' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand check" -s p -l port -d 'Port [default: 6379, or the URL\'s]' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand check" -s n -l db -d 'Database number [default: 0, or the URL\'s]' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand check" -l user -d 'ACL user name (on any URL or --host)' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand check" -l password-file -d 'Read the password from the first line of this file (else $ANARCHON_REDIS_PASSWORD). Used when the URL carries none. Never printed' -r -F
complete -c anarchon -n "__fish_anarchon_using_subcommand check" -l tls-ca -d 'Trust this PEM CA bundle for TLS instead of the system\'s' -r -F
complete -c anarchon -n "__fish_anarchon_using_subcommand check" -l prefix -d 'Prefix of every key, as the scheduler\'s `prefix` option' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand check" -l backend -d 'redis, or valkey: the Valkey flavour, which refuses the idmp strategy' -r -f -a "redis\t''
valkey\t''"
complete -c anarchon -n "__fish_anarchon_using_subcommand check" -s o -l output -d 'Output format, as kubectl\'s -o: table (default), json (as --json), wide (tables are never cut to the terminal\'s width), name (only each row\'s first column: job names for `list`)' -r -f -a "table\t''
json\t''
wide\t''
name\t''"
complete -c anarchon -n "__fish_anarchon_using_subcommand check" -l color -d 'When to use colour: auto (a terminal without NO_COLOR), always, never' -r -f -a "auto\t''
always\t''
never\t''"
complete -c anarchon -n "__fish_anarchon_using_subcommand check" -l time-format -d 'How text output shows times: auto (compact UTC with "3m ago" on a terminal, RFC 3339 with milliseconds when piped), compact (2026-12-02 15:10:00, UTC), rfc3339, or relative (3m ago)' -r -f -a "auto\t''
compact\t''
rfc3339\t''
relative\t''"
complete -c anarchon -n "__fish_anarchon_using_subcommand check" -l connect-timeout -d 'Give up connecting after this long' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand check" -l command-timeout -d 'Give up waiting for one reply after this long' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand check" -l all -d 'Every job under the prefix (the default when no JOB is given)'
complete -c anarchon -n "__fish_anarchon_using_subcommand check" -l tls -d 'Connect with TLS (as a rediss:// URL does), with --host or --port'
complete -c anarchon -n "__fish_anarchon_using_subcommand check" -l tls-insecure -d 'Do not verify the server\'s TLS certificate (testing only)'
complete -c anarchon -n "__fish_anarchon_using_subcommand check" -l cluster -d 'Use the Redis Cluster client (also implied by a redis+cluster:// or rediss+cluster:// URL)'
complete -c anarchon -n "__fish_anarchon_using_subcommand check" -l json -d 'Print one JSON document instead of text (stable shape, see docs/guide.md, "JSON output")'
complete -c anarchon -n "__fish_anarchon_using_subcommand check" -l no-headers -d 'Print tables without their header row (for scripts, as kubectl --no-headers)'
complete -c anarchon -n "__fish_anarchon_using_subcommand check" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c anarchon -n "__fish_anarchon_using_subcommand metrics" -l listen -d 'Serve the metrics over HTTP at ADDR (host:port, or a port alone on 127.0.0.1) instead of printing them once [default address: 127.0.0.1:9464]. Bind 0.0.0.0 only on purpose' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand metrics" -l redis -d 'Redis or Valkey URL: redis://[user:password@]host:port[/db], rediss:// for TLS, redis+cluster:// for Redis Cluster, redis+sentinel://host:port[,host:port]/<master>[/db] to ask Sentinel for the current primary (after a failover, the new one)' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand metrics" -l host -d 'Host to connect to [default: localhost, or the URL\'s]. --host, --port and --db, like redis-cli\'s, replace those parts of $ANARCHON_REDIS_URL / $REDIS_URL and keep the others' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand metrics" -s p -l port -d 'Port [default: 6379, or the URL\'s]' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand metrics" -s n -l db -d 'Database number [default: 0, or the URL\'s]' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand metrics" -l user -d 'ACL user name (on any URL or --host)' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand metrics" -l password-file -d 'Read the password from the first line of this file (else $ANARCHON_REDIS_PASSWORD). Used when the URL carries none. Never printed' -r -F
complete -c anarchon -n "__fish_anarchon_using_subcommand metrics" -l tls-ca -d 'Trust this PEM CA bundle for TLS instead of the system\'s' -r -F
complete -c anarchon -n "__fish_anarchon_using_subcommand metrics" -l prefix -d 'Prefix of every key, as the scheduler\'s `prefix` option' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand metrics" -l backend -d 'redis, or valkey: the Valkey flavour, which refuses the idmp strategy' -r -f -a "redis\t''
valkey\t''"
complete -c anarchon -n "__fish_anarchon_using_subcommand metrics" -s o -l output -d 'Output format, as kubectl\'s -o: table (default), json (as --json), wide (tables are never cut to the terminal\'s width), name (only each row\'s first column: job names for `list`)' -r -f -a "table\t''
json\t''
wide\t''
name\t''"
complete -c anarchon -n "__fish_anarchon_using_subcommand metrics" -l color -d 'When to use colour: auto (a terminal without NO_COLOR), always, never' -r -f -a "auto\t''
always\t''
never\t''"
complete -c anarchon -n "__fish_anarchon_using_subcommand metrics" -l time-format -d 'How text output shows times: auto (compact UTC with "3m ago" on a terminal, RFC 3339 with milliseconds when piped), compact (2026-12-02 15:10:00, UTC), rfc3339, or relative (3m ago)' -r -f -a "auto\t''
compact\t''
rfc3339\t''
relative\t''"
complete -c anarchon -n "__fish_anarchon_using_subcommand metrics" -l connect-timeout -d 'Give up connecting after this long' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand metrics" -l command-timeout -d 'Give up waiting for one reply after this long' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand metrics" -l tls -d 'Connect with TLS (as a rediss:// URL does), with --host or --port'
complete -c anarchon -n "__fish_anarchon_using_subcommand metrics" -l tls-insecure -d 'Do not verify the server\'s TLS certificate (testing only)'
complete -c anarchon -n "__fish_anarchon_using_subcommand metrics" -l cluster -d 'Use the Redis Cluster client (also implied by a redis+cluster:// or rediss+cluster:// URL)'
complete -c anarchon -n "__fish_anarchon_using_subcommand metrics" -l json -d 'Print one JSON document instead of text (stable shape, see docs/guide.md, "JSON output")'
complete -c anarchon -n "__fish_anarchon_using_subcommand metrics" -l no-headers -d 'Print tables without their header row (for scripts, as kubectl --no-headers)'
complete -c anarchon -n "__fish_anarchon_using_subcommand metrics" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c anarchon -n "__fish_anarchon_using_subcommand serve" -l listen -d 'Where to serve: host:port, or a port alone on 127.0.0.1. Bind 0.0.0.0 only on purpose' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand serve" -l redis -d 'Redis or Valkey URL: redis://[user:password@]host:port[/db], rediss:// for TLS, redis+cluster:// for Redis Cluster, redis+sentinel://host:port[,host:port]/<master>[/db] to ask Sentinel for the current primary (after a failover, the new one)' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand serve" -l host -d 'Host to connect to [default: localhost, or the URL\'s]. --host, --port and --db, like redis-cli\'s, replace those parts of $ANARCHON_REDIS_URL / $REDIS_URL and keep the others' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand serve" -s p -l port -d 'Port [default: 6379, or the URL\'s]' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand serve" -s n -l db -d 'Database number [default: 0, or the URL\'s]' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand serve" -l user -d 'ACL user name (on any URL or --host)' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand serve" -l password-file -d 'Read the password from the first line of this file (else $ANARCHON_REDIS_PASSWORD). Used when the URL carries none. Never printed' -r -F
complete -c anarchon -n "__fish_anarchon_using_subcommand serve" -l tls-ca -d 'Trust this PEM CA bundle for TLS instead of the system\'s' -r -F
complete -c anarchon -n "__fish_anarchon_using_subcommand serve" -l prefix -d 'Prefix of every key, as the scheduler\'s `prefix` option' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand serve" -l backend -d 'redis, or valkey: the Valkey flavour, which refuses the idmp strategy' -r -f -a "redis\t''
valkey\t''"
complete -c anarchon -n "__fish_anarchon_using_subcommand serve" -s o -l output -d 'Output format, as kubectl\'s -o: table (default), json (as --json), wide (tables are never cut to the terminal\'s width), name (only each row\'s first column: job names for `list`)' -r -f -a "table\t''
json\t''
wide\t''
name\t''"
complete -c anarchon -n "__fish_anarchon_using_subcommand serve" -l color -d 'When to use colour: auto (a terminal without NO_COLOR), always, never' -r -f -a "auto\t''
always\t''
never\t''"
complete -c anarchon -n "__fish_anarchon_using_subcommand serve" -l time-format -d 'How text output shows times: auto (compact UTC with "3m ago" on a terminal, RFC 3339 with milliseconds when piped), compact (2026-12-02 15:10:00, UTC), rfc3339, or relative (3m ago)' -r -f -a "auto\t''
compact\t''
rfc3339\t''
relative\t''"
complete -c anarchon -n "__fish_anarchon_using_subcommand serve" -l connect-timeout -d 'Give up connecting after this long' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand serve" -l command-timeout -d 'Give up waiting for one reply after this long' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand serve" -l tls -d 'Connect with TLS (as a rediss:// URL does), with --host or --port'
complete -c anarchon -n "__fish_anarchon_using_subcommand serve" -l tls-insecure -d 'Do not verify the server\'s TLS certificate (testing only)'
complete -c anarchon -n "__fish_anarchon_using_subcommand serve" -l cluster -d 'Use the Redis Cluster client (also implied by a redis+cluster:// or rediss+cluster:// URL)'
complete -c anarchon -n "__fish_anarchon_using_subcommand serve" -l json -d 'Print one JSON document instead of text (stable shape, see docs/guide.md, "JSON output")'
complete -c anarchon -n "__fish_anarchon_using_subcommand serve" -l no-headers -d 'Print tables without their header row (for scripts, as kubectl --no-headers)'
complete -c anarchon -n "__fish_anarchon_using_subcommand serve" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c anarchon -n "__fish_anarchon_using_subcommand doctor" -l pings -d 'How many PINGs measure the latency' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand doctor" -l redis -d 'Redis or Valkey URL: redis://[user:password@]host:port[/db], rediss:// for TLS, redis+cluster:// for Redis Cluster, redis+sentinel://host:port[,host:port]/<master>[/db] to ask Sentinel for the current primary (after a failover, the new one)' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand doctor" -l host -d 'Host to connect to [default: localhost, or the URL\'s]. --host, --port and --db, like redis-cli\'s, replace those parts of $ANARCHON_REDIS_URL / $REDIS_URL and keep the others' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand doctor" -s p -l port -d 'Port [default: 6379, or the URL\'s]' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand doctor" -s n -l db -d 'Database number [default: 0, or the URL\'s]' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand doctor" -l user -d 'ACL user name (on any URL or --host)' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand doctor" -l password-file -d 'Read the password from the first line of this file (else $ANARCHON_REDIS_PASSWORD). Used when the URL carries none. Never printed' -r -F
complete -c anarchon -n "__fish_anarchon_using_subcommand doctor" -l tls-ca -d 'Trust this PEM CA bundle for TLS instead of the system\'s' -r -F
complete -c anarchon -n "__fish_anarchon_using_subcommand doctor" -l prefix -d 'Prefix of every key, as the scheduler\'s `prefix` option' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand doctor" -l backend -d 'redis, or valkey: the Valkey flavour, which refuses the idmp strategy' -r -f -a "redis\t''
valkey\t''"
complete -c anarchon -n "__fish_anarchon_using_subcommand doctor" -s o -l output -d 'Output format, as kubectl\'s -o: table (default), json (as --json), wide (tables are never cut to the terminal\'s width), name (only each row\'s first column: job names for `list`)' -r -f -a "table\t''
json\t''
wide\t''
name\t''"
complete -c anarchon -n "__fish_anarchon_using_subcommand doctor" -l color -d 'When to use colour: auto (a terminal without NO_COLOR), always, never' -r -f -a "auto\t''
always\t''
never\t''"
complete -c anarchon -n "__fish_anarchon_using_subcommand doctor" -l time-format -d 'How text output shows times: auto (compact UTC with "3m ago" on a terminal, RFC 3339 with milliseconds when piped), compact (2026-12-02 15:10:00, UTC), rfc3339, or relative (3m ago)' -r -f -a "auto\t''
compact\t''
rfc3339\t''
relative\t''"
complete -c anarchon -n "__fish_anarchon_using_subcommand doctor" -l connect-timeout -d 'Give up connecting after this long' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand doctor" -l command-timeout -d 'Give up waiting for one reply after this long' -r
complete -c anarchon -n "__fish_anarchon_using_subcommand doctor" -l tls -d 'Connect with TLS (as a rediss:// URL does), with --host or --port'
complete -c anarchon -n "__fish_anarchon_using_subcommand doctor" -l tls-insecure -d 'Do not verify the server\'s TLS certificate (testing only)'
complete -c anarchon -n "__fish_anarchon_using_subcommand doctor" -l cluster -d 'Use the Redis Cluster client (also implied by a redis+cluster:// or rediss+cluster:// URL)'
complete -c anarchon -n "__fish_anarchon_using_subcommand doctor" -l json -d 'Print one JSON document instead of text (stable shape, see docs/guide.md, "JSON output")'
complete -c anarchon -n "__fish_anarchon_using_subcommand doctor" -l no-headers -d 'Print tables without their header row (for scripts, as kubectl --no-headers)'
complete -c anarchon -n "__fish_anarchon_using_subcommand doctor" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c anarchon -n "__fish_anarchon_using_subcommand completions" -l dir -d 'Write every shell\'s completions into this directory instead' -r -F
complete -c anarchon -n "__fish_anarchon_using_subcommand completions" -l install -d 'Install SHELL\'s completions where the shell finds them for this user (bash: $XDG_DATA_HOME/bash-completion/completions, zsh: $XDG_DATA_HOME/zsh/site-functions (add it to fpath), fish: $XDG_CONFIG_HOME/fish/completions), and say where'
complete -c anarchon -n "__fish_anarchon_using_subcommand completions" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c anarchon -n "__fish_anarchon_using_subcommand man" -l dir -d 'Write anarchon.1 and one page per command into this directory instead' -r -F
complete -c anarchon -n "__fish_anarchon_using_subcommand man" -l install -d 'Install the pages where `man` finds them for this user ($XDG_DATA_HOME/man/man1), and say where'
complete -c anarchon -n "__fish_anarchon_using_subcommand man" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c anarchon -n "__fish_anarchon_using_subcommand help; and not __fish_seen_subcommand_from claim heartbeat finish run cron list inspect top next history timeline logs wait trim release pause resume calendar forget migrate run-now check metrics serve doctor completions man help" -f -a "claim" -d 'Claim one run of a job: exactly one caller wins it'
complete -c anarchon -n "__fish_anarchon_using_subcommand help; and not __fish_seen_subcommand_from claim heartbeat finish run cron list inspect top next history timeline logs wait trim release pause resume calendar forget migrate run-now check metrics serve doctor completions man help" -f -a "heartbeat" -d 'Push the lease of a run you hold forward (only with the current attempt\'s token)'
complete -c anarchon -n "__fish_anarchon_using_subcommand help; and not __fish_seen_subcommand_from claim heartbeat finish run cron list inspect top next history timeline logs wait trim release pause resume calendar forget migrate run-now check metrics serve doctor completions man help" -f -a "finish" -d 'End a run you hold as ok or failed, recording its result'
complete -c anarchon -n "__fish_anarchon_using_subcommand help; and not __fish_seen_subcommand_from claim heartbeat finish run cron list inspect top next history timeline logs wait trim release pause resume calendar forget migrate run-now check metrics serve doctor completions man help" -f -a "run" -d 'Run a command for one scheduled run, on whichever host wins it (the crontab wrapper)'
complete -c anarchon -n "__fish_anarchon_using_subcommand help; and not __fish_seen_subcommand_from claim heartbeat finish run cron list inspect top next history timeline logs wait trim release pause resume calendar forget migrate run-now check metrics serve doctor completions man help" -f -a "cron" -d 'Run every job of a crontab file, each scheduled run once across the replicas running it'
complete -c anarchon -n "__fish_anarchon_using_subcommand help; and not __fish_seen_subcommand_from claim heartbeat finish run cron list inspect top next history timeline logs wait trim release pause resume calendar forget migrate run-now check metrics serve doctor completions man help" -f -a "list" -d 'List every job under the prefix: layout, runs in progress, last run, last result, history'
complete -c anarchon -n "__fish_anarchon_using_subcommand help; and not __fish_seen_subcommand_from claim heartbeat finish run cron list inspect top next history timeline logs wait trim release pause resume calendar forget migrate run-now check metrics serve doctor completions man help" -f -a "inspect" -d 'Show one job in full: runs in progress with their leases, recent runs and results, keys, and its newest events (as kubectl describe): claims, takeovers, skips, releases, and who paused, resumed, released or ran it by hand, when and why'
complete -c anarchon -n "__fish_anarchon_using_subcommand help; and not __fish_seen_subcommand_from claim heartbeat finish run cron list inspect top next history timeline logs wait trim release pause resume calendar forget migrate run-now check metrics serve doctor completions man help" -f -a "top" -d 'A full-screen live view for on-call: jobs worst first, runs in progress, and actions on them'
complete -c anarchon -n "__fish_anarchon_using_subcommand help; and not __fish_seen_subcommand_from claim heartbeat finish run cron list inspect top next history timeline logs wait trim release pause resume calendar forget migrate run-now check metrics serve doctor completions man help" -f -a "next" -d 'When a job runs next: its fire times, jitter, the daylight-saving changes ahead, and what --catch-up would do after an outage'
complete -c anarchon -n "__fish_anarchon_using_subcommand help; and not __fish_seen_subcommand_from claim heartbeat finish run cron list inspect top next history timeline logs wait trim release pause resume calendar forget migrate run-now check metrics serve doctor completions man help" -f -a "history" -d 'Show a job\'s attempts and results, newest first (or, with --events, what happened to it and who did what)'
complete -c anarchon -n "__fish_anarchon_using_subcommand help; and not __fish_seen_subcommand_from claim heartbeat finish run cron list inspect top next history timeline logs wait trim release pause resume calendar forget migrate run-now check metrics serve doctor completions man help" -f -a "timeline" -d 'Draw a job\'s runs on a time axis: overlaps, takeovers, late starts, skips, failures'
complete -c anarchon -n "__fish_anarchon_using_subcommand help; and not __fish_seen_subcommand_from claim heartbeat finish run cron list inspect top next history timeline logs wait trim release pause resume calendar forget migrate run-now check metrics serve doctor completions man help" -f -a "logs" -d 'Show what a job\'s runs left behind: stderr tail, exit code or signal, timeout, duration'
complete -c anarchon -n "__fish_anarchon_using_subcommand help; and not __fish_seen_subcommand_from claim heartbeat finish run cron list inspect top next history timeline logs wait trim release pause resume calendar forget migrate run-now check metrics serve doctor completions man help" -f -a "wait" -d 'Wait for a run to end and exit with how it ended, as `gh run watch --exit-status`'
complete -c anarchon -n "__fish_anarchon_using_subcommand help; and not __fish_seen_subcommand_from claim heartbeat finish run cron list inspect top next history timeline logs wait trim release pause resume calendar forget migrate run-now check metrics serve doctor completions man help" -f -a "trim" -d 'Trim a job\'s history (or every job\'s) with the scheduler\'s rules'
complete -c anarchon -n "__fish_anarchon_using_subcommand help; and not __fish_seen_subcommand_from claim heartbeat finish run cron list inspect top next history timeline logs wait trim release pause resume calendar forget migrate run-now check metrics serve doctor completions man help" -f -a "release" -d 'Stop a run in progress without its token (a hung or vanished holder), safely'
complete -c anarchon -n "__fish_anarchon_using_subcommand help; and not __fish_seen_subcommand_from claim heartbeat finish run cron list inspect top next history timeline logs wait trim release pause resume calendar forget migrate run-now check metrics serve doctor completions man help" -f -a "pause" -d 'Pause a job across the fleet: every host\'s `run` skips it (exit 87) until `resume` or --until'
complete -c anarchon -n "__fish_anarchon_using_subcommand help; and not __fish_seen_subcommand_from claim heartbeat finish run cron list inspect top next history timeline logs wait trim release pause resume calendar forget migrate run-now check metrics serve doctor completions man help" -f -a "resume" -d 'End a job\'s pause: its next scheduled run is claimed as usual'
complete -c anarchon -n "__fish_anarchon_using_subcommand help; and not __fish_seen_subcommand_from claim heartbeat finish run cron list inspect top next history timeline logs wait trim release pause resume calendar forget migrate run-now check metrics serve doctor completions man help" -f -a "calendar" -d 'Keep named calendars of exclusion windows (holidays, freezes) that jobs share'
complete -c anarchon -n "__fish_anarchon_using_subcommand help; and not __fish_seen_subcommand_from claim heartbeat finish run cron list inspect top next history timeline logs wait trim release pause resume calendar forget migrate run-now check metrics serve doctor completions man help" -f -a "forget" -d 'Retire a job that no host runs any more: monitoring stops expecting its runs'
complete -c anarchon -n "__fish_anarchon_using_subcommand help; and not __fish_seen_subcommand_from claim heartbeat finish run cron list inspect top next history timeline logs wait trim release pause resume calendar forget migrate run-now check metrics serve doctor completions man help" -f -a "migrate" -d 'Move the store to format 2 (anarchon\'s own layout), or back to format 1 with --to 1'
complete -c anarchon -n "__fish_anarchon_using_subcommand help; and not __fish_seen_subcommand_from claim heartbeat finish run cron list inspect top next history timeline logs wait trim release pause resume calendar forget migrate run-now check metrics serve doctor completions man help" -f -a "run-now" -d 'Start a manual run of a job now: on a replica of `anarchon cron`, or here'
complete -c anarchon -n "__fish_anarchon_using_subcommand help; and not __fish_seen_subcommand_from claim heartbeat finish run cron list inspect top next history timeline logs wait trim release pause resume calendar forget migrate run-now check metrics serve doctor completions man help" -f -a "check" -d 'Check that jobs ran when their schedules said: a dead man\'s switch for monitoring'
complete -c anarchon -n "__fish_anarchon_using_subcommand help; and not __fish_seen_subcommand_from claim heartbeat finish run cron list inspect top next history timeline logs wait trim release pause resume calendar forget migrate run-now check metrics serve doctor completions man help" -f -a "metrics" -d 'Print Prometheus metrics of every job (health, last success, leases, ...), or serve them'
complete -c anarchon -n "__fish_anarchon_using_subcommand help; and not __fish_seen_subcommand_from claim heartbeat finish run cron list inspect top next history timeline logs wait trim release pause resume calendar forget migrate run-now check metrics serve doctor completions man help" -f -a "serve" -d 'Serve a read-only status page of every job (and /metrics) to a browser'
complete -c anarchon -n "__fish_anarchon_using_subcommand help; and not __fish_seen_subcommand_from claim heartbeat finish run cron list inspect top next history timeline logs wait trim release pause resume calendar forget migrate run-now check metrics serve doctor completions man help" -f -a "doctor" -d 'Check the server: kind and version, strategies, mode, eviction, format, clock, latency'
complete -c anarchon -n "__fish_anarchon_using_subcommand help; and not __fish_seen_subcommand_from claim heartbeat finish run cron list inspect top next history timeline logs wait trim release pause resume calendar forget migrate run-now check metrics serve doctor completions man help" -f -a "completions" -d 'Print shell completions (bash, zsh, fish, powershell, elvish), or write them all to --dir'
complete -c anarchon -n "__fish_anarchon_using_subcommand help; and not __fish_seen_subcommand_from claim heartbeat finish run cron list inspect top next history timeline logs wait trim release pause resume calendar forget migrate run-now check metrics serve doctor completions man help" -f -a "man" -d 'Print the man page, or write one per command to --dir'
complete -c anarchon -n "__fish_anarchon_using_subcommand help; and not __fish_seen_subcommand_from claim heartbeat finish run cron list inspect top next history timeline logs wait trim release pause resume calendar forget migrate run-now check metrics serve doctor completions man help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c anarchon -n "__fish_anarchon_using_subcommand help; and __fish_seen_subcommand_from calendar" -f -a "set" -d 'Set a calendar\'s windows, replacing what it had (creating it)'
complete -c anarchon -n "__fish_anarchon_using_subcommand help; and __fish_seen_subcommand_from calendar" -f -a "show" -d 'A calendar\'s windows and its edits, newest first'
complete -c anarchon -n "__fish_anarchon_using_subcommand help; and __fish_seen_subcommand_from calendar" -f -a "list" -d 'Every calendar under the prefix, with its windows'
complete -c anarchon -n "__fish_anarchon_using_subcommand help; and __fish_seen_subcommand_from calendar" -f -a "delete" -d 'Delete a calendar: the jobs that name it run every slot again'

# Job names, read from the store (`anarchon list`), for the commands whose argument is a job.
complete -c anarchon -n "__fish_seen_subcommand_from inspect history logs release pause resume trim claim heartbeat finish run-now" -f -a "(anarchon list 2>/dev/null | awk 'NR > 1 { print \$1 }')"
