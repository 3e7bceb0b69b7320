import CaskTestSupport
import CipherCask
import Foundation
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// What a run of the `cask` binary produced.
struct CaskResult {
  var status: Int32
  var stdout: Data
  var stderr: Data

  var out: String { String(decoding: stdout, as: UTF8.self) }
  var err: String { String(decoding: stderr, as: UTF8.self) }
}

/// Runs the built `cask` executable as a child process, the way a user would: arguments,
/// environment, standard input; it collects standard output, standard error and the exit
/// status. Output goes to files, not pipes, so a large output cannot block the child.
///
/// The child gets no terminal (standard input is a file or /dev/null, the outputs are
/// files), so `cask` never prompts and never draws a progress bar.
struct CaskRunner {
  /// The `cask` binary beside this test bundle in the build products directory.
  static let executable: String? = {
    let running = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
    let bundle = URL(fileURLWithPath: running ?? CommandLine.arguments[0])
    let candidate = bundle.deletingLastPathComponent().appendingPathComponent("cask").path
    return FileManager.default.isExecutableFile(atPath: candidate) ? candidate : nil
  }()

  /// Thrown, failing the test, when the binary is not where `swift build` puts it.
  struct MissingExecutable: Error, CustomStringConvertible {
    var description: String {
      "the cask executable is missing next to the test bundle; build it with 'swift build --product cask'"
    }
  }

  /// The binary, or an error that says how to build it.
  static func binary() throws -> String {
    guard let executable else { throw MissingExecutable() }
    return executable
  }

  let directory: TemporaryDirectory

  init(_ label: String) throws {
    directory = try TemporaryDirectory("cask-cli-\(label)")
  }

  /// A path inside the test's directory.
  func path(_ name: String) -> String { directory.file(name) }

  /// Runs `cask` with `arguments` in the test's directory.
  ///
  /// - Parameters:
  ///   - password: put in `CASK_PASSWORD` when not nil.
  ///   - environment: more variables for the child (the parent's `CASK_*` are never passed on).
  ///   - stdin: bytes for standard input (otherwise /dev/null).
  ///   - prefix: a command that runs `cask` (its binary and `arguments` follow `prefix`), for
  ///     example in another mount namespace.
  @discardableResult
  func run(
    _ arguments: [String], password: String? = nil, environment: [String: String] = [:], stdin: Data? = nil,
    prefix: [String] = []
  ) throws -> CaskResult {
    let process = Process()
    let command = prefix + [try Self.binary()] + arguments
    process.executableURL = URL(fileURLWithPath: command[0])
    process.arguments = Array(command.dropFirst())
    process.currentDirectoryURL = URL(fileURLWithPath: directory.path)
    var childEnvironment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("CASK_") }
    if let password { childEnvironment["CASK_PASSWORD"] = password }
    childEnvironment.merge(environment) { $1 }
    process.environment = childEnvironment

    let id = UUID().uuidString
    let outPath = path(".out-\(id)")
    let errPath = path(".err-\(id)")
    _ = FileManager.default.createFile(atPath: outPath, contents: nil)
    _ = FileManager.default.createFile(atPath: errPath, contents: nil)
    defer {
      try? FileManager.default.removeItem(atPath: outPath)
      try? FileManager.default.removeItem(atPath: errPath)
    }
    let outHandle = try FileHandle(forWritingTo: URL(fileURLWithPath: outPath))
    let errHandle = try FileHandle(forWritingTo: URL(fileURLWithPath: errPath))
    process.standardOutput = outHandle
    process.standardError = errHandle
    if let stdin {
      let inPath = path(".in-\(id)")
      try stdin.write(to: URL(fileURLWithPath: inPath))
      process.standardInput = try FileHandle(forReadingFrom: URL(fileURLWithPath: inPath))
    } else {
      process.standardInput = FileHandle.nullDevice
    }
    try process.run()
    process.waitUntilExit()
    try outHandle.close()
    try errHandle.close()
    try? FileManager.default.removeItem(atPath: path(".in-\(id)"))
    return CaskResult(
      status: process.terminationStatus,
      stdout: try Data(contentsOf: URL(fileURLWithPath: outPath)),
      stderr: try Data(contentsOf: URL(fileURLWithPath: errPath)))
  }

  /// Runs `cask` and also returns the child's peak resident set size in bytes, taken from
  /// `wait4`'s resource usage of exactly that child. The child runs in the test process's
  /// working directory: give it absolute paths.
  func runMeasuringPeakMemory(_ arguments: [String], password: String) throws -> (CaskResult, Int) {
    let binary = try Self.binary()
    let outPath = path(".measured-out")
    let errPath = path(".measured-err")
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 1, outPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
    posix_spawn_file_actions_addopen(&actions, 2, errPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
    var environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("CASK_") }
    environment["CASK_PASSWORD"] = password
    let argv = ([binary] + arguments).map { strdup($0) } + [nil]
    let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
    defer {
      for pointer in argv + envp { free(pointer) }
    }
    var pid: pid_t = 0
    let spawned = posix_spawn(&pid, binary, &actions, nil, argv, envp)
    guard spawned == 0 else { throw CocoaError(.executableLoad) }
    var status: Int32 = 0
    var usage = rusage()
    while wait4(pid, &status, 0, &usage) < 0 && errno == EINTR {}
    let exitStatus = (status & 0x7F) == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
    let result = CaskResult(
      status: exitStatus, stdout: try Data(contentsOf: URL(fileURLWithPath: outPath)),
      stderr: try Data(contentsOf: URL(fileURLWithPath: errPath)))
    return (result, usage.ru_maxrss * 1024)
  }

  /// Runs `cask` with standard error on a pseudo-terminal (standard input and output stay
  /// files), and returns what was written to the terminal as `stderr`.
  func runWithTerminalStderr(_ arguments: [String], password: String, environment: [String: String] = [:])
    throws -> CaskResult
  {
    let (master, terminal) = try Self.openPseudoTerminal()
    defer { close(master) }
    let process = try process(arguments, password: password, environment: environment)
    let outPath = path(".tty-out")
    _ = FileManager.default.createFile(atPath: outPath, contents: nil)
    let outHandle = try FileHandle(forWritingTo: URL(fileURLWithPath: outPath))
    process.standardInput = FileHandle.nullDevice
    process.standardOutput = outHandle
    process.standardError = FileHandle(fileDescriptor: terminal, closeOnDealloc: false)
    try process.run()
    close(terminal)
    process.waitUntilExit()
    try outHandle.close()
    // The terminal keeps what the child wrote; read it until the closed side reports EIO.
    var written = Data()
    var buffer = [UInt8](repeating: 0, count: 4096)
    while true {
      let count = read(master, &buffer, buffer.count)
      if count < 0 && errno == EINTR { continue }
      guard count > 0 else { break }
      written.append(contentsOf: buffer[0..<count])
    }
    return CaskResult(
      status: process.terminationStatus, stdout: try Data(contentsOf: URL(fileURLWithPath: outPath)), stderr: written)
  }

  /// A new pseudo-terminal: its master side and its terminal side, both open (the caller
  /// closes them).
  static func openPseudoTerminal() throws -> (master: Int32, terminal: Int32) {
    // posix_openpt and friends are not visible from Swift's Glibc module; these are their
    // ioctls (Linux's generic encoding: _IOR('T', 0x30, int) and _IOW('T', 0x31, int)).
    let getNumber: UInt = 0x8004_5430
    let setLock: UInt = 0x4004_5431
    let master = open("/dev/ptmx", O_RDWR | O_NOCTTY)
    guard master >= 0 else { throw CocoaError(.fileReadUnknown) }
    var unlocked: Int32 = 0
    var number: UInt32 = 0
    let terminal =
      ioctl(master, setLock, &unlocked) == 0 && ioctl(master, getNumber, &number) == 0
      ? open("/dev/pts/\(number)", O_RDWR | O_NOCTTY) : -1
    guard terminal >= 0 else {
      close(master)
      throw CocoaError(.fileReadUnknown)
    }
    return (master, terminal)
  }

  /// A `cask` process with `arguments`, in this runner's directory, with `password` in
  /// `CASK_PASSWORD`, `environment` added and no other `CASK_` variable; not started.
  func process(_ arguments: [String], password: String, environment: [String: String] = [:]) throws -> Process {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: try Self.binary())
    process.arguments = arguments
    process.currentDirectoryURL = URL(fileURLWithPath: directory.path)
    var childEnvironment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("CASK_") }
    childEnvironment["CASK_PASSWORD"] = password
    childEnvironment.merge(environment) { $1 }
    process.environment = childEnvironment
    return process
  }

  /// `["--header-file", F]`, F a new file (mode 0600) in the test's directory holding
  /// `headers`, one per line: how the tests give `pull` and `import URL` a token, which
  /// `--header` would show in `ps` (and warn about).
  func headerFile(_ headers: String...) throws -> [String] {
    let name = ".headers-\(UUID().uuidString)"
    guard
      FileManager.default.createFile(
        atPath: path(name), contents: Data(headers.map { $0 + "\n" }.joined().utf8),
        attributes: [.posixPermissions: 0o600])
    else { throw CocoaError(.fileWriteUnknown) }
    return ["--header-file", name]
  }

  /// Makes a store with `cask create`, checking that it worked.
  func createStore(_ name: String, password: String) throws -> String {
    let result = try run(["create", name], password: password)
    #expect(result.status == 0, "create failed: \(result.err)")
    return path(name)
  }

  /// Creates store `name` in format version 2, through the library, for the tests that cut
  /// or grow a closed store's segments to stand for a crash: in a version 3 store its manifest
  /// makes that an integrity violation, which open refuses.
  func createVersion2Store(_ name: String, password: String) throws -> String {
    var options = CaskStore.Options()
    options.newStoreFormatVersion = 2
    try CaskStore(path: path(name), password: password, options: options).close()
    return path(name)
  }

  func remove() {
    directory.remove()
  }
}

extension CaskRunner {
  /// Spawns `sh -c 'SCRIPT'` with `$0` the `cask` binary and `$1`, `$2`, ... `arguments`, as
  /// from a shell: the signals that end a process at their default action and unblocked (the
  /// test runner's own dispositions are not inherited), standard streams on /dev/null,
  /// `password` in `CASK_PASSWORD`. For the tests that send the child a signal.
  func spawnFromShell(_ script: String, arguments: [String], password: String) throws -> pid_t {
    var attributes = posix_spawnattr_t()
    posix_spawnattr_init(&attributes)
    defer { posix_spawnattr_destroy(&attributes) }
    var defaults = sigset_t()
    sigemptyset(&defaults)
    for signal in [SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGALRM, SIGXFSZ] { sigaddset(&defaults, signal) }
    var empty = sigset_t()
    sigemptyset(&empty)
    posix_spawnattr_setsigdefault(&attributes, &defaults)
    posix_spawnattr_setsigmask(&attributes, &empty)
    posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    for descriptor: Int32 in 0...2 {
      posix_spawn_file_actions_addopen(&actions, descriptor, "/dev/null", descriptor == 0 ? O_RDONLY : O_WRONLY, 0)
    }
    var environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("CASK_") }
    environment["CASK_PASSWORD"] = password
    let words = ["/bin/sh", "-c", script, try Self.binary()] + arguments
    let argv = words.map { strdup($0) } + [nil]
    let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
    defer {
      for pointer in argv + envp { free(pointer) }
    }
    var pid: pid_t = 0
    let spawned = posix_spawn(&pid, "/bin/sh", &actions, &attributes, argv, envp)
    guard spawned == 0 else { throw CocoaError(.executableLoad) }
    return pid
  }

  /// Waits for a child and returns its wait status.
  static func wait(_ pid: pid_t) -> Int32 {
    var status: Int32 = 0
    while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
    return status
  }
}
