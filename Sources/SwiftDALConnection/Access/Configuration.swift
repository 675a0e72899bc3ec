/// How SwiftDAL opens and sets up connections.
///
/// The defaults suit a backend service: foreign keys enforced, a 5-second busy
/// timeout, WAL journal for files, `synchronous=FULL` (nothing acknowledged is lost,
/// even on power loss; `.normal` trades the last transactions on power loss for
/// speed), and 4 reader connections in a ``DatabasePool``.
///
/// For example:
///
/// ```swift
/// var configuration = Configuration()
/// configuration.synchronous = .normal
/// configuration.pragmas = [Pragma(name: "cache_size", value: "-20000")]
/// configuration.observer = MetricsObserver()              // a DatabaseObserver of yours
/// configuration.slowStatementThreshold = .milliseconds(100)
/// let pool = try DatabasePool(path: "/var/lib/app/app.sqlite", configuration: configuration)
/// ```
public struct Configuration: Sendable {
    /// `PRAGMA foreign_keys` (SQLite's own default is off; SwiftDAL's is on).
    public var foreignKeysEnabled = true
    /// How long a statement waits for a lock held by another connection before failing
    /// with `SQLITE_BUSY`.
    public var busyTimeout: Duration = .seconds(5)
    /// The journal mode of file databases opened for writing.
    public var journalMode: JournalMode = .wal
    /// `PRAGMA synchronous`.
    public var synchronous: Synchronous = .full
    /// The size, in bytes, that the write-ahead log (or a persistent journal) is cut back
    /// to once a checkpoint has emptied it (`PRAGMA journal_size_limit`); `nil` keeps
    /// SQLite's default, which never shrinks the file. The default, 32 MiB, bounds the
    /// file left after a burst of writes or a long read (see ``DatabasePool/checkpoint(_:)``).
    public var journalSizeLimit: Int? = 32 * 1024 * 1024
    /// More pragmas, run in order on every connection after the defaults.
    public var pragmas: [Pragma] = []
    /// The largest string or blob, in bytes, a connection accepts or produces
    /// (`SQLITE_LIMIT_LENGTH`); larger values fail with `SQLITE_TOOBIG`. `nil` keeps
    /// SQLite's limit (1,000,000,000 bytes in standard builds).
    public var maximumValueLength: Int?
    /// The name of a registered SQLite VFS to open files through (`nil`: the default).
    public var vfsName: String?
    /// A time limit for every call on this database (a `read`/`write` closure, a DAL
    /// call): a call still running when it passes is stopped and throws
    /// ``DALError/Code/timeout``; `nil` (the default): no limit. A limit set with
    /// ``withDatabaseTimeout(_:operation:)-l73r`` takes its place for the calls inside it.
    public var callTimeout: Duration?
    /// The most reader connections a ``DatabasePool`` opens (at least 1); each opens
    /// when reads first need it.
    public var maximumReaderCount = 4
    /// Called on every new connection after the pragmas (register functions, attach…).
    public var prepareDatabase: (@Sendable (Database) throws -> Void)?
    /// Called after each statement runs, with its SQL (parameters as `?`, never
    /// values) and its duration: a shorthand for tools; services set ``observer``.
    public var trace: (@Sendable (TraceEvent) -> Void)?
    /// Told of every statement: its SQL (placeholders only), duration, row count, engine,
    /// the wait for a connection, and its error if it failed. `nil` (the default): nothing
    /// is measured.
    public var observer: (any DatabaseObserver)?
    /// Statements that run longer are reported with ``StatementEvent/isSlow`` set;
    /// `nil` (the default): none is.
    public var slowStatementThreshold: Duration?

    /// The defaults above.
    ///
    /// For example, `let queue = try DatabaseQueue(path: path, configuration: Configuration())`.
    public init() {}

    /// SQLite journal modes.
    ///
    /// For example, `configuration.journalMode = .wal`.
    public enum JournalMode: String, Sendable {
        /// `DELETE`: a rollback journal, deleted at each commit (SQLite's default for files).
        case delete = "DELETE"
        /// `TRUNCATE`: a rollback journal, truncated to zero bytes at each commit.
        case truncate = "TRUNCATE"
        /// `PERSIST`: a rollback journal, kept and its header zeroed at each commit.
        case persist = "PERSIST"
        /// `WAL`: a write-ahead log; readers never block the writer (the default, and what a pool needs).
        case wal = "WAL"
    }

    /// `PRAGMA synchronous` levels.
    ///
    /// For example, `configuration.synchronous = .normal`.
    public enum Synchronous: String, Sendable {
        /// `OFF`: no syncs; a power loss can corrupt the database.
        case off = "OFF"
        /// `NORMAL`: syncs at checkpoints; in WAL mode, a power loss can lose the last commits, never consistency.
        case normal = "NORMAL"
        /// `FULL`: syncs at every commit; committed transactions survive a power loss (the default).
        case full = "FULL"
        /// `EXTRA`: like `FULL`, and also syncs the directory after a rollback journal is deleted.
        case extra = "EXTRA"
    }
}

/// A pragma to set on every connection. The name must be a plain identifier and the
/// value a plain word or number; anything else is refused when the connection opens
/// (pragma values cannot be bound as parameters).
///
/// For example, `Pragma(name: "cache_size", value: "-20000")`.
public struct Pragma: Sendable, Hashable {
    /// The pragma's name (letters, digits, underscores).
    public var name: String
    /// Its value (a word or a number).
    public var value: String

    /// A pragma to set on every connection.
    public init(name: String, value: String) {
        self.name = name
        self.value = value
    }

    /// The pragma's statement; throws when the name or the value is not allowed.
    package func sql() throws -> String {
        guard Self.isIdentifier(name) else {
            throw DALError(.invalidIdentifier, "\(name) is not a valid pragma name")
        }
        guard !value.isEmpty,
            value.utf8.allSatisfy({ Self.isWordByte($0) || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: ".") })
        else {
            throw DALError(.invalidValue, "\(value) is not a valid value for pragma \(name)")
        }
        return "PRAGMA \(name) = \(value)"
    }

    /// Whether `text` is a plain identifier: ASCII letters, digits and `_`, not starting
    /// with a digit (a name SQL and Swift both take without quoting; the code generator
    /// checks type names with it too).
    package static func isIdentifier(_ text: String) -> Bool {
        guard let first = text.utf8.first, !(UInt8(ascii: "0")...UInt8(ascii: "9")).contains(first) else {
            return false
        }
        return text.utf8.allSatisfy(isWordByte)
    }

    private static func isWordByte(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
            || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: "_")
    }
}

/// One statement's run, as reported to ``Configuration/trace``.
///
/// For example, `configuration.trace = { print($0.sql, $0.duration) }` (in a tool, not a service).
public struct TraceEvent: Sendable {
    /// The SQL text with `?`/named parameters, never the bound values.
    public let sql: String
    /// How long the statement ran.
    public let duration: Duration

    /// An event, for the engines' connection layers.
    package init(sql: String, duration: Duration) {
        self.sql = sql
        self.duration = duration
    }
}
