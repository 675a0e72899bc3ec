import SwiftDALConnection
import Testing

/// What swiftdal-gen writes in a generated file's header (and what may be printed): a
/// server's URL or keyword string without its password, whichever engine it names.
@Suite struct ConnectionTextTests {
    @Test(arguments: [
        ("mysql://app:s3cret@db:3306/shop", "mysql://app@db:3306/shop"),
        ("mysql://app:p%40ss@localhost/shop?socket=/run/m.sock", "mysql://app@localhost/shop?socket=/run/m.sock"),
        ("mariadb://app:p@ss@db/shop", "mariadb://app@db/shop"),
        ("mysql://app@db/shop", "mysql://app@db/shop"),
        ("mariadb://db/shop", "mariadb://db/shop"),
        ("postgresql://app:s3cret@db/shop?sslmode=require", "postgresql://app@db/shop?sslmode=require"),
        ("postgresql://db/shop?password=s3cret&sslmode=require", "postgresql://db/shop?sslmode=require"),
        ("postgresql://db/shop?sslmode=require&password=s3cret", "postgresql://db/shop?sslmode=require"),
        ("postgresql://db/shop?password=s3cret", "postgresql://db/shop"),
        ("postgresql://app:s3cret@h1:5432,h2:5433/shop#x", "postgresql://app@h1:5432,h2:5433/shop#x"),
        ("postgresql://app:pa?s3@db/shop", "postgresql://app@db/shop"),
        ("postgresql://app:pa#s3@db/shop", "postgresql://app@db/shop"),
        ("postgresql://app:p@s3cret/x@db:5432/shop", "postgresql://app@db:5432/shop"),
        ("postgresql://app:p/s3@db/shop?x=a@b", "postgresql://app@db/shop?x=a@b"),
        ("postgresql://app:s3cret@[::1]:5432/shop", "postgresql://app@[::1]:5432/shop"),
        ("postgresql://db/shop?PassWord=s3cret", "postgresql://db/shop"),
        ("postgresql://db/shop?pass%77ord=s3cret&x=1", "postgresql://db/shop?x=1"),
        ("host=/tmp password=s3cret dbname=shop", "host=/tmp dbname=shop"),
        ("host=/tmp dbname=shop password = 's3 \\' cret' user=app", "host=/tmp dbname=shop user=app"),
        ("password=s3cret host=/tmp", "host=/tmp"),
        ("host=db password=s3\\ cret dbname=x", "host=db dbname=x"),
        ("host=db password=s3'cret dbname=x", "host=db dbname=x"),
        ("user='app'password=s3cret host=db", "user='app' host=db"),
        ("host=db password=s3cret application_name=svc://gen", "host=db application_name=svc://gen"),
        ("host=/tmp dbname=shop password='s3cret", "host=/tmp dbname=shop"),
        ("host=/tmp dbname=shop PASSWORD=s3cret", "host=/tmp dbname=shop"),
        ("host=/tmp dbname password=s3cret", "host=/tmp dbname"),
        ("host=/tmp dbname=shop", "host=/tmp dbname=shop"),
        ("host=/tmp application_name='password=x'", "host=/tmp application_name='password=x'"),
        ("host=/tmp application_name='my password=x'", "host=/tmp application_name='my password=x'")
    ])
    func theTextLosesItsPasswordAndKeepsTheRest(text: String, expected: String) {
        let stripped = ConnectionText.withoutPassword(text)
        #expect(stripped == expected)
        #expect(!stripped.contains("s3"), "\(stripped)")
    }
}
