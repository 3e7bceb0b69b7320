import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// Direct HTTP on a Kinto server, as another client (the "fourth party") or a check would do.
public struct KintoHTTP: Sendable {
  public let url: URL
  public var bucket: String
  public var collection: String

  public init(_ url: URL, bucket: String = "tests", collection: String = "notes") {
    self.url = url
    self.bucket = bucket
    self.collection = collection
  }

  public var recordsPath: String { "/buckets/\(bucket)/collections/\(collection)/records" }

  public func request(_ method: String, _ path: String, json: Any? = nil, headers: [String: String] = [:]) async throws
    -> (Int, Data, [String: String])
  {
    var request = URLRequest(url: URL(string: url.absoluteString + path)!)
    request.httpMethod = method
    let credential = Data("\(KintoProcess.user):\(KintoProcess.password)".utf8).base64EncodedString()
    request.setValue("Basic \(credential)", forHTTPHeaderField: "Authorization")
    for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
    if let json {
      request.httpBody = try JSONSerialization.data(withJSONObject: json)
      request.setValue("application/json", forHTTPHeaderField: "Content-Type")
    }
    let (data, response) = try await URLSession.shared.data(for: request)
    let http = response as? HTTPURLResponse
    var headers: [String: String] = [:]
    for (key, value) in http?.allHeaderFields ?? [:] {
      if let key = key as? String, let value = value as? String { headers[key.lowercased()] = value }
    }
    return (http?.statusCode ?? 0, data, headers)
  }

  /// Every record (tombstones excluded), by record id.
  public func records() async throws -> [String: [String: Any]] {
    var result: [String: [String: Any]] = [:]
    var next: String? = url.absoluteString + recordsPath + "?_limit=1000"
    while let page = next {
      let (status, data, headers) = try await request("GET", String(page.dropFirst(url.absoluteString.count)))
      guard status == 200 else { throw KintoProcessError(description: "listing answered \(status)") }
      let object = try JSONSerialization.jsonObject(with: data) as? [String: Any]
      for record in object?["data"] as? [[String: Any]] ?? [] {
        if let id = record["id"] as? String { result[id] = record }
      }
      next = headers["next-page"]
    }
    return result
  }

  @discardableResult
  public func delete(_ id: String) async throws -> Int {
    try await request("DELETE", recordsPath + "/" + id).0
  }
}
