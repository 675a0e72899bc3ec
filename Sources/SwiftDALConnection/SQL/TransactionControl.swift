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

    /// The first statement of `script` that ends or starts a transaction, as ``word(of:)``
    /// names it (with the statement), or `nil`. The script is split at each `;` outside
    /// the literals, quoted names and comments `lexicon` reads; a `CREATE` statement (a
    /// trigger's, a routine's) or MariaDB's `BEGIN NOT ATOMIC` block runs to the `END` of
    /// its own `BEGIN` (`CASE … END` counted alike, `END IF`, `END LOOP`, `END WHILE`,
    /// `END REPEAT` and `END FOR` not), so that the `;` inside its body split nothing, as
    /// SQLite, PostgreSQL (`BEGIN ATOMIC`) and MariaDB read them. Text the lexicon cannot
    /// read (an unclosed literal) ends the look there: the engine refuses it.
    ///
    /// For example, `TransactionControl.statement(in: "INSERT …; COMMIT", lexicon: .sqlite)?.word
    /// == "COMMIT"`.
    package static func statement(in script: String, lexicon: SQLLexicon) -> (word: String, sql: String)? {
        let bytes = Array(script.utf8)
        var statementStart = 0
        var index = 0
        var depth = 0  // the open `BEGIN` and `CASE` of a block statement
        var firstWord: UInt64 = 0  // of the statement being read; 0 before its first word
        var isBlockStatement = false
        var previousWord: UInt64 = 0
        func control(upTo end: Int) -> (word: String, sql: String)? {
            let text = String(decoding: bytes[statementStart..<end], as: UTF8.self)
            return word(of: text).map { ($0, text) }
        }
        scan: while index < bytes.count {
            let region: SQLLexicon.Region?
            do {
                region = try lexicon.region(in: bytes, at: index, sql: script)
            } catch {
                break scan
            }
            guard let region, region.end > index else {
                if bytes[index] == UInt8(ascii: ";") && depth == 0 {
                    if let found = control(upTo: index) { return found }
                    statementStart = index + 1
                    firstWord = 0
                    isBlockStatement = false
                    previousWord = 0
                }
                index += 1
                continue
            }
            if region.kind == .word {
                var packed: UInt64 = 0
                for byte in bytes[index..<min(region.end, index + 8)] { packed = packed << 8 | UInt64(byte & 0xDF) }
                if region.end - index > 8 { packed |= 1 << 63 }
                if firstWord == 0 {
                    firstWord = packed
                    isBlockStatement = packed == create
                } else if firstWord == begin && previousWord == begin && packed == not {
                    isBlockStatement = true  // MariaDB's `BEGIN NOT ATOMIC … END`
                    depth += 1
                }
                if isBlockStatement {
                    if packed == begin || packed == caseWord {
                        depth += 1
                    } else if packed == end, depth > 0 {
                        // `END IF` and the like close no `BEGIN`: look at the next word.
                        var next = region.end
                        while next < bytes.count, bytes[next] == 0x20 || (0x09...0x0D).contains(bytes[next]) {
                            next += 1
                        }
                        let closesALoop = [ifWord, loop, whileWord, repeatWord, forWord].contains { letters in
                            guard next + letters.count <= bytes.count else { return false }
                            let after = next + letters.count
                            return zip(bytes[next..<after], letters).allSatisfy { $0 & 0xDF == $1 }
                                && (after == bytes.count || !SQLLexicon.isNameByte(bytes[after]))
                        }
                        if !closesALoop { depth -= 1 }
                    }
                }
                previousWord = packed
            }
            index = region.end
        }
        return control(upTo: bytes.count)
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
    private static let ifWord: [UInt8] = Array("IF".utf8)
    private static let loop: [UInt8] = Array("LOOP".utf8)
    private static let whileWord: [UInt8] = Array("WHILE".utf8)
    private static let repeatWord: [UInt8] = Array("REPEAT".utf8)
    private static let forWord: [UInt8] = Array("FOR".utf8)

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
