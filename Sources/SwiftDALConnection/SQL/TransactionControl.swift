/// The statements that end or start a transaction (`COMMIT`, `END`, `ROLLBACK` — not
/// `ROLLBACK TO` a savepoint —, `ABORT`, `BEGIN`, `START TRANSACTION`, `PREPARE
/// TRANSACTION`), told from their first words: a transaction that ``Database`` runs
/// (`write`, `read`, `inTransaction`) refuses them in its body, where each engine would do
/// something else (SQLite commits, then fails the transaction's own `COMMIT`; PostgreSQL
/// commits and goes on outside any transaction; MariaDB commits and starts another), and
/// the call's outcome would no longer say what was written.
package enum TransactionControl {
    /// The first word of `sql` (upper case; with `TRANSACTION` after `START` and `PREPARE`) when
    /// `sql` ends or starts a transaction; `nil` for any other statement. Blanks and
    /// comments (`-- …`, `# …` to the end of the line, `/* … */`) before it are skipped.
    ///
    /// For example, `TransactionControl.word(of: "  commit") == "COMMIT"`, and
    /// `TransactionControl.word(of: "START TRANSACTION") == "START TRANSACTION"`, and
    /// `TransactionControl.word(of: "ROLLBACK TO SAVEPOINT s") == nil`.
    package static func word(of sql: String) -> String? {
        var sql = sql
        return sql.withUTF8 { bytes -> String? in
            var index = start(in: bytes)
            let first = word(in: bytes, at: &index)
            switch first {
            case commit, end, abort: break
            case begin:
                // MariaDB's compound statement, `BEGIN NOT ATOMIC … END`, starts no transaction.
                guard word(in: bytes, at: &index) != not else { return nil }
            case start, prepare:
                guard word(in: bytes, at: &index) == transaction else { return nil }
                return text(of: first) + " TRANSACTION"
            case rollback:
                // `ROLLBACK [WORK | TRANSACTION] TO [SAVEPOINT] name` undoes part of it.
                var next = word(in: bytes, at: &index)
                if next == work || next == transaction { next = word(in: bytes, at: &index) }
                guard next != to else { return nil }
            default: return nil
            }
            return text(of: first)
        }
    }

    /// The statements of `script` as `lexicon` reads it, each from its first word (the
    /// blanks and comments before it left out), for ``word(of:)``; `nil` when the text
    /// holds something the lexicon cannot read the way the server would (an executable
    /// comment whose two readings differ), so that no statement can be told apart.
    ///
    /// The script is split at each `;` outside literals, quoted names and comments. A
    /// routine's body (`CREATE [OR REPLACE] … FUNCTION | PROCEDURE | TRIGGER | EVENT |
    /// PACKAGE`, among its first eight words) runs to the `END` of its `BEGIN`, as `psql`
    /// reads one: `BEGIN` opens a block, `CASE` inside one opens another (`END CASE`
    /// closes it), `END IF`, `END LOOP`, `END WHILE`, `END REPEAT` and `END FOR` close
    /// none, and an `END` that reads as a name (before `=`, `,`, `)` or `.`, or after a
    /// `.`) is one. SQLite's dialect splits with SQLite's own reading instead
    /// (``EngineDialect/scriptStatements(_:)``).
    ///
    /// For example, `TransactionControl.statements(in: "INSERT …; /* c */ COMMIT", lexicon: l)
    /// == ["INSERT …", "COMMIT"]`.
    package static func statements(in script: String, lexicon: SQLLexicon) -> [String]? {
        let bytes = Array(script.utf8)
        var statements = [String]()
        var firstWordAt: Int?  // of the statement being read
        var wordCount = 0
        var isRoutine = false
        var depth = 0  // the open blocks of a routine's body
        var skipsCase = false  // the `CASE` of an `END CASE`
        var previousWasDot = false
        // MariaDB has no `END` statement (its `END` closes a compound statement: `BEGIN NOT
        // ATOMIC … END`, whose statements run at once and are read one by one here).
        let endIsAStatement = !lexicon.rules.executableComments
        func finish(upTo end: Int) {
            if let firstWordAt, firstWordAt < end, endIsAStatement || word(at: firstWordAt) != Self.end {
                statements.append(String(decoding: bytes[firstWordAt..<end], as: UTF8.self))
            }
            firstWordAt = nil
            wordCount = 0
            isRoutine = false
            depth = 0
            skipsCase = false
        }
        /// The next byte at or after `from` that is neither blank nor in a comment (0 at the end).
        func nextCode(from: Int) -> (byte: UInt8, at: Int) {
            var index = from
            while index < bytes.count {
                if bytes[index] == 0x20 || (0x09...0x0D).contains(bytes[index]) {
                    index += 1
                    continue
                }
                guard let region = try? lexicon.region(in: bytes, at: index, sql: script),
                    region.kind == .lineComment || region.kind == .blockComment, region.end > index
                else { return (bytes[index], index) }
                index = region.end
            }
            return (0, index)
        }
        var index = 0
        while index < bytes.count {
            let region: SQLLexicon.Region?
            do {
                region = try lexicon.region(in: bytes, at: index, sql: script)
            } catch {
                break  // an unclosed literal or comment: the engine refuses the text
            }
            guard let region, region.end > index else {
                let byte = bytes[index]
                if byte == UInt8(ascii: ";") && depth == 0 {
                    finish(upTo: index)
                } else if byte > 0x20, firstWordAt == nil {
                    firstWordAt = index  // `(SELECT …)`, MariaDB's `/*!…*/` code
                }
                previousWasDot = byte == UInt8(ascii: ".")
                index += 1
                continue
            }
            if region.kind == .lineComment, region.end == bytes.count, bytes[index] == UInt8(ascii: "/") {
                return nil  // an executable comment read two ways (`SQLLexicon`)
            }
            if region.kind == .blockComment, firstWordAt == nil,
                SQLLexicon.executableCommentMarker(bytes, index) != nil
            {
                firstWordAt = index  // its code runs: it starts the statement
            }
            if region.kind == .word || region.kind == .literal || region.kind == .quotedName
                || region.kind == .parameter
            {
                if firstWordAt == nil { firstWordAt = index }
            }
            if region.kind == .word {
                let packed = word(at: index)
                wordCount += 1
                if wordCount <= 8,
                    packed == function || packed == procedure || packed == trigger || packed == event
                        || packed == package, firstWordAt.map(word(at:)) == create
                {
                    isRoutine = true
                }
                if isRoutine && !previousWasDot {
                    let next = nextCode(from: region.end)
                    let isName = [UInt8(ascii: "="), UInt8(ascii: ","), UInt8(ascii: ")"), UInt8(ascii: ".")]
                        .contains(next.byte)
                    if packed == begin && !isName {
                        depth += 1
                    } else if packed == caseWord && !isName {
                        if skipsCase {
                            skipsCase = false
                        } else if depth > 0 {
                            depth += 1
                        }
                    } else if packed == end && !isName && depth > 0 {
                        let following = word(at: next.at)
                        if following == caseWord {
                            depth -= 1
                            skipsCase = true
                        } else if ![ifPacked, loopPacked, whilePacked, repeatPacked, forPacked].contains(following) {
                            depth -= 1
                        }
                    }
                }
            }
            previousWasDot = false
            index = region.end
        }
        finish(upTo: bytes.count)
        return statements

        /// The packed word at `at` (0 when none starts there).
        func word(at: Int) -> UInt64 {
            var packed: UInt64 = 0
            var letters = 0
            var position = at
            while position < bytes.count, SQLLexicon.isWordByte(bytes[position]) {
                if letters < 8 { packed = packed << 8 | UInt64(bytes[position] & 0xDF) }
                letters += 1
                position += 1
            }
            return letters > 8 ? packed | 1 << 63 : packed
        }
    }

    /// Whether `sql` starts with an ASCII letter (no blank or comment before its first word).
    package static func startsWithALetter(_ sql: String) -> Bool {
        guard let first = sql.utf8.first else { return false }
        return (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(first & 0xDF)
    }

    /// The error for `sql`, sent as one statement inside the body of a transaction SwiftDAL
    /// runs, when it would end or start that transaction (its first word, or for a text
    /// that begins with blanks or comments any of its statements as `dialect` splits them:
    /// PostgreSQL nests `/* */` and ends `--` at a carriage return too); `nil` when it may run.
    package static func refusal(of sql: String, dialect: any EngineDialect) -> DALError? {
        guard mayControl(sql) else { return nil }
        if let word = word(of: sql) { return refused(word, sql: sql, inScript: false) }
        guard !startsWithALetter(sql) else { return nil }
        return refusal(ofScript: sql, dialect: dialect)
    }

    /// The error for `script` inside the body of a transaction SwiftDAL runs when one of
    /// its statements, as `dialect` splits them (``EngineDialect/scriptStatements(_:)``),
    /// would end or start that transaction, or when it cannot be split; `nil` when it may run.
    package static func refusal(ofScript script: String, dialect: any EngineDialect) -> DALError? {
        guard let statements = dialect.scriptStatements(script) else {
            return refused("text whose executable comment reads two ways (/*!…*/)", sql: script, inScript: true)
        }
        for statement in statements {
            if let word = word(of: statement) { return refused(word, sql: script, inScript: true) }
        }
        return nil
    }

    @inline(never)
    private static func refused(_ word: String, sql: String, inScript: Bool) -> DALError {
        DALError(
            .unsupportedOperation,
            "\(word) inside a transaction SwiftDAL runs (write, read, inTransaction) is refused, and "
                + (inScript ? "no statement of the script was sent: " : "was not sent: ")
                + "the transaction ends with the call (return from its closure to commit, throw to roll back; "
                + "inSavepoint undoes a part)",
            sql: sql)
    }

    /// Whether `sql` may end or start a transaction: a look at its first two bytes, so that
    /// the common statements (`SELECT`, `INSERT`, `UPDATE`, `DELETE`, `WITH`, `SET`,
    /// `SAVEPOINT`) cost a few instructions; ``word(of:)`` decides for the rest.
    package static func mayControl(_ sql: String) -> Bool {
        let look = sql.utf8.withContiguousStorageIfAvailable { bytes -> Bool in
            guard let first = bytes.first else { return false }
            switch first | 0x20 {
            case UInt8(ascii: "s"):
                // `START`, not `SELECT`, `SET` or `SAVEPOINT`.
                return bytes.count > 1 && bytes[1] | 0x20 == UInt8(ascii: "t")
            case UInt8(ascii: "i"), UInt8(ascii: "u"), UInt8(ascii: "d"), UInt8(ascii: "w"): return false
            default: return true  // `ABORT`, `BEGIN`, `COMMIT`, `END`, `PREPARE`, `ROLLBACK`; blanks, comments
            }
        }
        return look ?? true
    }

    private static let commit = packed("COMMIT")
    private static let end = packed("END")
    private static let abort = packed("ABORT")
    private static let begin = packed("BEGIN")
    private static let start = packed("START")
    private static let prepare = packed("PREPARE")
    private static let rollback = packed("ROLLBACK")
    private static let transaction = packed("TRANSACTION")
    private static let work = packed("WORK")
    private static let to = packed("TO")
    private static let not = packed("NOT")
    private static let create = packed("CREATE")
    private static let caseWord = packed("CASE")
    private static let function = packed("FUNCTION")
    private static let procedure = packed("PROCEDURE")
    private static let trigger = packed("TRIGGER")
    private static let event = packed("EVENT")
    private static let package = packed("PACKAGE")
    private static let ifPacked = packed("IF")
    private static let loopPacked = packed("LOOP")
    private static let whilePacked = packed("WHILE")
    private static let repeatPacked = packed("REPEAT")
    private static let forPacked = packed("FOR")

    /// `word`'s letters packed as ``word(in:at:)`` packs them.
    private static func packed(_ word: String) -> UInt64 {
        var value: UInt64 = 0
        for (index, byte) in word.utf8.enumerated() where index < 8 { value = value << 8 | UInt64(byte) }
        return word.utf8.count > 8 ? value | 1 << 63 : value
    }

    /// The word `packed` stands for (8 letters at most: ``word(of:)`` returns only those).
    private static func text(of packed: UInt64) -> String {
        var bytes = [UInt8]()
        var rest = packed & ~(1 << 63)
        while rest != 0 {
            bytes.insert(UInt8(truncatingIfNeeded: rest), at: 0)
            rest >>= 8
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The word at `index` (ASCII letters, upper-cased; its first 8 packed, with the top
    /// bit set past 8), `0` when none is there; `index` moves past it and the blanks and
    /// comments after it.
    private static func word(in bytes: UnsafeBufferPointer<UInt8>, at index: inout Int) -> UInt64 {
        var packed: UInt64 = 0
        var letters = 0
        while index < bytes.count {
            let byte = bytes[index] & 0xDF
            guard byte >= 0x41 && byte <= 0x5A else { break }
            if letters < 8 { packed = packed << 8 | UInt64(byte) }
            letters += 1
            index += 1
        }
        if letters > 0 { index = start(in: bytes, from: index) }
        return letters > 8 ? packed | 1 << 63 : packed
    }

    /// The offset of the next word from `first`: past blanks and comments. An executable
    /// comment (MariaDB's `/*! … */`) is not skipped: its text runs.
    private static func start(in bytes: UnsafeBufferPointer<UInt8>, from first: Int = 0) -> Int {
        var index = first
        let count = bytes.count
        while index < count {
            let byte = bytes[index]
            let next: UInt8 = index + 1 < count ? bytes[index + 1] : 0
            if byte == 0x20 || (0x09...0x0D).contains(byte) {
                index += 1
            } else if byte == UInt8(ascii: "#") || (byte == UInt8(ascii: "-") && next == UInt8(ascii: "-")) {
                while index < count, bytes[index] != 0x0A { index += 1 }
            } else if byte == UInt8(ascii: "/") && next == UInt8(ascii: "*") {
                if index + 2 < count, bytes[index + 2] == UInt8(ascii: "!") { return index }
                index += 2
                while index + 1 < count, !(bytes[index] == UInt8(ascii: "*") && bytes[index + 1] == UInt8(ascii: "/")) {
                    index += 1
                }
                index = min(count, index + 2)
            } else {
                return index
            }
        }
        return index
    }
}
