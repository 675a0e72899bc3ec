import Foundation
import SwiftDALTestSupport
import Testing

@testable import SwiftDALConnection

@Suite struct ConcurrencyTests {
    @Test func eightConcurrentTasksThroughThePoolFinishWithExactCountsAndNoBusy() async throws {
        let directory = try TemporaryDirectory()
        let pool = try DatabasePool(path: directory.file("pool.sqlite"))
        try await pool.write { db in
            try db.executeScript(
                "CREATE TABLE counters(id INTEGER PRIMARY KEY, n INTEGER NOT NULL); INSERT INTO counters VALUES (1, 0);"
            )
            try makeUsersTable(db)
        }
        let tasks = 8
        let iterations = 60
        try await withThrowingTaskGroup(of: Void.self) { group in
            for task in 0..<tasks {
                group.addTask {
                    for iteration in 0..<iterations {
                        if (task + iteration) % 2 == 0 {
                            try await pool.write { db in
                                try db.execute(
                                    "INSERT INTO users(name, age) VALUES (\("t\(task)-\(iteration)"), \(iteration))")
                                try db.execute("UPDATE counters SET n = n + 1 WHERE id = 1")
                            }
                        } else {
                            let consistent = try await pool.read { db -> Bool in
                                let users = try db.fetchScalar(Int.self, "SELECT COUNT(*) FROM users") ?? -1
                                let counter = try db.fetchScalar(Int.self, "SELECT n FROM counters") ?? -2
                                return users == counter
                            }
                            #expect(consistent, "a read saw a half-applied write")
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        let writes = tasks * iterations / 2
        #expect(try await pool.read { try $0.fetchScalar(Int.self, "SELECT COUNT(*) FROM users") } == writes)
        #expect(try await pool.read { try $0.fetchScalar(Int.self, "SELECT n FROM counters") } == writes)
        try pool.close()
    }

    @Test func readersOpenOnFirstNeedAndNotAfterClose() throws {
        let directory = try TemporaryDirectory()
        let opened = Locked(0)
        var configuration = Configuration()
        configuration.maximumReaderCount = 3
        configuration.prepareDatabase = { _ in opened.withLock { $0 += 1 } }
        let pool = try DatabasePool(path: directory.file("lazy.sqlite"), configuration: configuration)
        #expect(opened.withLock { $0 } == 1)  // the writer only
        try pool.write { try makeUsersTable($0) }
        for _ in 0..<5 { _ = try pool.read { try $0.fetchScalar(Int.self, "SELECT COUNT(*) FROM users") } }
        #expect(opened.withLock { $0 } == 2)  // one thread, one reader, reused
        // Three reads held at once need three readers.
        let inside = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let failures = Locked(0)
        let group = DispatchGroup()
        for _ in 0..<3 {
            group.enter()
            Thread {  // a thread each: a dispatch queue may not run three blocked blocks at once
                do {
                    try pool.read { _ in
                        inside.signal()
                        release.wait()
                    }
                } catch {
                    failures.withLock { $0 += 1 }
                }
                group.leave()
            }.start()
        }
        for _ in 0..<3 { inside.wait() }
        for _ in 0..<3 { release.signal() }
        group.wait()
        #expect(failures.withLock { $0 } == 0)
        #expect(opened.withLock { $0 } == 4)
        try pool.close()
        let closed = #expect(throws: DALError.self) { _ = try pool.read { try $0.fetchScalar(Int.self, "SELECT 1") } }
        #expect(closed?.code == .connectionClosed)
        #expect(opened.withLock { $0 } == 4)
    }

    @Test func syncAccessFromManyThreadsIsSerializedWithoutBusy() throws {
        let directory = try TemporaryDirectory()
        let pool = try DatabasePool(path: directory.file("threads.sqlite"))
        try pool.write { try makeUsersTable($0) }
        let failures = Locked(0)
        DispatchQueue.concurrentPerform(iterations: 8) { worker in
            for index in 0..<50 {
                do {
                    try pool.write { db in try db.execute("INSERT INTO users(name) VALUES (\("w\(worker)-\(index)"))") }
                    _ = try pool.read { try $0.fetchScalar(Int.self, "SELECT COUNT(*) FROM users") }
                } catch {
                    failures.withLock { $0 += 1 }
                }
            }
        }
        #expect(failures.withLock { $0 } == 0)
        #expect(try pool.read { try $0.fetchScalar(Int.self, "SELECT COUNT(*) FROM users") } == 400)
    }

    @Test func readsAreIsolatedSnapshotsWhileTheWriterCommits() throws {
        let directory = try TemporaryDirectory()
        let pool = try DatabasePool(path: directory.file("snapshot.sqlite"))
        try pool.write { db in
            try makeUsersTable(db)
            try db.execute("INSERT INTO users(name) VALUES ('first')")
        }
        try pool.read { db throws -> Void in
            #expect(try db.fetchScalar(Int.self, "SELECT COUNT(*) FROM users") == 1)
            // Another thread commits while this read is open (the writer never waits for readers).
            let done = DispatchSemaphore(value: 0)
            DispatchQueue.global().async {
                _ = try? pool.write { try $0.execute("INSERT INTO users(name) VALUES ('second')") }
                done.signal()
            }
            done.wait()
            #expect(try db.fetchScalar(Int.self, "SELECT COUNT(*) FROM users") == 1)
        }
        #expect(try pool.read { try $0.fetchScalar(Int.self, "SELECT COUNT(*) FROM users") } == 2)
    }

    @Test func reentrantWritesAndWritesInsideReadsThrowInsteadOfDeadlocking() throws {
        let directory = try TemporaryDirectory()
        let pool = try DatabasePool(path: directory.file("reentrant.sqlite"))
        try pool.write { try makeUsersTable($0) }
        let nestedWrite = #expect(throws: DALError.self) { try pool.write { _ in try pool.write { _ in } } }
        #expect(nestedWrite?.code == .reentrantAccess)
        let nestedRead = #expect(throws: DALError.self) { try pool.read { _ in try pool.read { _ in } } }
        #expect(nestedRead?.code == .reentrantAccess)
        let writeInRead = #expect(throws: DALError.self) { try pool.read { _ in try pool.write { _ in } } }
        #expect(writeInRead?.code == .reentrantAccess)
        let joinedWriteInRead = #expect(throws: DALError.self) {
            try pool.read { _ in try pool.reentrantWrite { _ in } }
        }
        #expect(joinedWriteInRead?.code == .writeInReadOnlyAccess)
        let sqlWriteInRead = #expect(throws: SQLiteError.self) {
            try pool.read { db -> Void in try db.execute("INSERT INTO users(name) VALUES ('x')") }
        }
        #expect(sqlWriteInRead?.code.primary == .readOnly)

        let queue = try DatabaseQueue.inMemory()
        try queue.write { try makeUsersTable($0) }
        #expect(
            #expect(throws: DALError.self) { try queue.write { _ in try queue.write { _ in } } }?.code
                == .reentrantAccess)
        let queueWriteInRead = #expect(throws: SQLiteError.self) {
            try queue.read { db -> Void in try db.execute("INSERT INTO users(name) VALUES ('x')") }
        }
        #expect(queueWriteInRead?.code.primary == .readOnly)
        // The queue is writable again after the read.
        try queue.write { try $0.execute("INSERT INTO users(name) VALUES ('ok')") }
        #expect(try queue.read { try $0.fetchScalar(Int.self, "SELECT COUNT(*) FROM users") } == 1)
    }

    @Test func reentrantAccessJoinsTheHeldConnectionAndItsTransaction() throws {
        let queue = try DatabaseQueue.inMemory()
        try queue.write { try makeUsersTable($0) }
        #expect(throws: TestFailure.self) {
            try queue.write { _ in
                try queue.reentrantWrite { try $0.execute("INSERT INTO users(name) VALUES ('joined')") }
                let seen = try queue.reentrantRead { try $0.fetchScalar(Int.self, "SELECT COUNT(*) FROM users") }
                #expect(seen == 1)
                throw TestFailure()
            }
        }
        #expect(try queue.read { try $0.fetchScalar(Int.self, "SELECT COUNT(*) FROM users") } == 0)
    }

    @Test func asyncAccessRunsOffTheCooperativePool() async throws {
        let queue = try DatabaseQueue.inMemory()
        try await queue.write { try makeUsersTable($0) }
        let label = try await queue.read { _ in currentSwiftDALThreadName() }
        #expect(label == "dal-queue0")
        let directory = try TemporaryDirectory()
        let pool = try DatabasePool(path: directory.file("async.sqlite"))
        #expect(try await pool.read { _ in currentSwiftDALThreadName() }?.hasPrefix("dal-reader") == true)
        #expect(try await pool.write { _ in currentSwiftDALThreadName() } == "dal-writer0")
        // The synchronous forms run on the calling thread.
        #expect(try pool.reentrantRead { _ in currentSwiftDALThreadName() } == nil)
    }
}
