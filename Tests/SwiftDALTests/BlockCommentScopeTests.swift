import Foundation
import SampleDAL
import SwiftDAL
import SwiftDALTestSupport
import Testing

/// Users "of a tenant" by age, for conditions whose comments SQLite reads its own way.
private final class UsersOfAge: BaseDAL<UserInfo>, @unchecked Sendable {
    override var scope: DALScope { DALScope(tenantColumn: "age") }
}

@Suite struct BlockCommentScopeTests {
    /// SQLite's `/* */` comments do not nest: the first `*/` after the `/*` ends one, the
    /// `*` of a `/*/` inside included. The scope's check once read `/*(/*/` as a comment
    /// still open (the second `/*` taking the `*`), and `/*(/*/ 1) OR (1 /*)*/` escaped the
    /// tenant (found by the MariaDB differential fuzz; SQLite reads it the same way).
    @Test func aCommentEndsAtTheStarOfASlashStarSlash() throws {
        let sample = try Sample()
        let nobody = UsersOfAge(database: sample.queue, tenant: -1)
        for text in ["/*(/*/ 1) OR (1 /*)*/", "/*(/*/ -1) OR (1=1 /*)*/", "/*(/*/ 1) OR 1=1 OR (1 /*)*/"] {
            let condition = SQL(sql: text)
            #expect(#expect(throws: DALError.self) { _ = try nobody.find(condition: condition) }?.code == .invalidSQL)
            #expect((try? nobody.getRecordCount(condition: condition)) == nil)
        }
        // A comment that holds a `/*` is still a comment.
        #expect(try nobody.getRecordCount(condition: "/* ( /* */ 1 = 1") == 0)
    }
}
