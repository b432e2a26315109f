//! Wrapping and constructor probes on classes compiled from tests/java, run under `java -Xverify:all`.

mod common;

use common::*;
use weft_classfile::{instrument, summarize, Instrumentation};

fn wraps(reqs: Vec<weft_classfile::WrapRequest>) -> Instrumentation {
    Instrumentation {
        wraps: reqs,
        constructor_probe: None,
    }
}

fn run(dir: &std::path::Path, main: &str, args: &[&str]) -> String {
    let cp = dir.to_str().expect("utf8 path");
    let mut a = vec!["-Xverify:all", "-cp", cp, main];
    a.extend_from_slice(args);
    let (ok, out, err) = java(&a);
    assert!(ok, "java {main} failed:\nstdout:\n{out}\nstderr:\n{err}");
    out
}

#[test]
fn wraps_every_method_shape() {
    let dir = scratch("basic");
    javac(&dir, &["weft/Probe.java", "t/Basic.java"], &[]);
    let reqs = vec![
        req("add", "(II)I", 1, false),
        req("mul", "(JJ)J", 2, false),
        req("incr", "()V", 3, false),
        req("avg", "([DJF)D", 4, true),
        req(
            "concat",
            "(Ljava/lang/String;Ljava/lang/Object;)Ljava/lang/String;",
            5,
            true,
        ),
        req("not", "(Z)Z", 6, false),
        req("b", "(B)B", 7, false),
        req("c", "(C)C", 8, false),
        req("s", "(S)S", 9, false),
        req("f", "(F)F", 10, false),
        req("arr", "(I[J[[Ljava/lang/Object;)[I", 11, false),
        req("thrower", "(I)V", 12, false),
        req("parse", "(Ljava/lang/String;)I", 13, true),
        req("names", "()Ljava/util/List;", 14, false),
        req("prot", "()V", 15, false),
        req("many", "(JDIJDLjava/lang/Object;[I)J", 16, false),
        req("sv", "()V", 17, false),
        req("obj", "(Ljava/lang/Object;I)Ljava/lang/Object;", 18, true),
        req("spin", "(I)I", 19, false),
        req("fresh", "(Z)Ljava/lang/Object;", 20, false),
        req("multi", "(I)I", 21, false),
        req("syncThrow", "()V", 22, false),
        // Not wrappable: missing, constructor, wrong descriptor.
        req("missing", "()V", 99, false),
        req("<init>", "()V", 98, false),
        req("add", "(JJ)J", 97, false),
    ];
    let n = reqs.len();
    let plain = run(&dir, "t.Basic", &[]);
    let before = summarize(&std::fs::read(dir.join("t/Basic.class")).unwrap()).unwrap();
    let r = transform(&dir.join("t/Basic.class"), &wraps(reqs));
    assert_eq!(r.wrapped.len(), n - 3, "{:?}", r.wrapped);
    assert_eq!(r.constructors, 0);
    // In place: the same methods with the same names, descriptors and modifiers.
    let after = summarize(&std::fs::read(dir.join("t/Basic.class")).unwrap()).unwrap();
    assert_eq!(before, after);

    let out = run(&dir, "t.Basic", &[]);
    // What the program sees of its own shape (reflection, stack traces, line numbers) is the same
    // as without the probes.
    let shape = |s: &str| -> String {
        let from = s.find("tag=").expect("tag line");
        let to = s.find("monitor free").expect("monitor line");
        s[from..to].to_string()
    };
    assert_eq!(shape(&out), shape(&plain));
    let expected = "\
add=5 self=true arg=null
mul=42 self=null
total=100000
avg=6.0
concat=x1 arg=x
not=true b=2 c=Q s=8 f=1.5
arr=[7, 0]
caught boom 1
caught NumberFormatException
parse=12 arg=12
names=[a, b]
many=21
obj=o null arg=p
tag=add
throws=[class java.io.IOException]
generic=java.util.List<java.lang.String>
prot=protected
incr=public synchronized
declared=28 private many,private static lambda$main$0,private static lambda$main$1,private static lambda$main$2,\
private static lambda$main$3,protected prot,public add,public arr,public avg,public b,public c,public callMany,\
public concat,public f,public multi,public names,public not,public obj,public s,public spin,public static fresh,\
public static main,public static mul,public static parse,public static synchronized sv,public synchronized incr,\
public synchronized syncThrow,public thrower
trace=t.Basic.thrower(Basic.java:42) <- t.Basic.main(Basic.java:121)
spin=0 fresh=yn
multi=10 -1 70 3 2 total=5000
syncThrow=sync line=72
monitor free
add: enter=1 exit=1
mul: enter=1 exit=1
incr: enter=100000 exit=100000
avg: enter=1 exit=1
concat: enter=1 exit=1
not: enter=1 exit=1
b: enter=1 exit=1
c: enter=1 exit=1
s: enter=1 exit=1
f: enter=1 exit=1
arr: enter=1 exit=1
thrower: enter=3 exit=3
parse: enter=2 exit=2
names: enter=1 exit=1
prot: enter=1 exit=1
many: enter=1 exit=1
sv: enter=1 exit=1
obj: enter=2 exit=2
spin: enter=1 exit=1
fresh: enter=2 exit=2
multi: enter=5 exit=5
syncThrow: enter=1 exit=1
";
    assert_eq!(out, expected);
}

#[test]
fn wraps_tasks_and_skips_bridges() {
    let dir = scratch("tasks");
    javac(&dir, &["weft/Probe.java", "t/Tasks.java"], &[]);
    let t = |c: &str| dir.join(format!("t/{c}.class"));
    assert_eq!(
        transform(&t("Work"), &wraps(vec![req("run", "()V", 20, false)]))
            .wrapped
            .len(),
        1
    );
    let r = transform(
        &t("Comp"),
        &wraps(vec![
            req("call", "()Ljava/lang/Integer;", 21, false),
            req("call", "()Ljava/lang/Object;", 22, false),
        ]),
    );
    assert_eq!(
        r.wrapped,
        vec![("call".to_string(), "()Ljava/lang/Integer;".to_string())]
    );
    let r = transform(
        &t("Fib"),
        &wraps(vec![
            req("compute", "()Ljava/lang/Integer;", 23, false),
            req("compute", "()Ljava/lang/Object;", 24, false),
        ]),
    );
    assert_eq!(r.wrapped.len(), 1);
    let greeter = std::fs::read(t("Greeter")).unwrap();
    let r = transform(
        &t("Greeter"),
        &wraps(vec![
            req("greet", "(Ljava/lang/String;)Ljava/lang/String;", 25, true),
            req("twice", "(I)I", 26, false),
        ]),
    );
    assert_eq!(r.wrapped.len(), 2);
    assert_eq!(
        transform(&t("Boom"), &wraps(vec![req("run", "()V", 27, false)]))
            .wrapped
            .len(),
        1
    );

    // A default method needs class version 52: at 51 the interface is left alone.
    let mut old = greeter.clone();
    old[6..8].copy_from_slice(&51u16.to_be_bytes());
    let r = instrument(
        &old,
        &wraps(vec![req(
            "greet",
            "(Ljava/lang/String;)Ljava/lang/String;",
            25,
            true,
        )]),
    )
    .unwrap();
    assert!(r.wrapped.is_empty() && r.bytes == old);

    let out = run(&dir, "t.Tasks", &[]);
    // fib(15) makes 2 * fib(16) - 1 = 1973 compute() calls.
    let expected = "\
boom: boom
work done=6 sum=168
fib=610
hi bob arg=bob twice=8
run: enter=6 exit=6
call: enter=4 exit=4
call-bridge: enter=0 exit=0
compute: enter=1973 exit=1973
compute-bridge: enter=0 exit=0
greet: enter=1 exit=1
twice: enter=1 exit=1
boom: enter=1 exit=1
";
    assert_eq!(out, expected);
}

#[test]
fn wraps_pre_java6_class_without_stack_map() {
    let dir = scratch("legacy");
    javac(&dir, &["weft/Probe.java"], &[]);
    javac(&dir, &["legacy/Legacy.java"], &["--release", "7"]);
    let path = dir.join("Legacy.class");
    let mut bytes = std::fs::read(&path).unwrap();
    bytes[6..8].copy_from_slice(&49u16.to_be_bytes());
    std::fs::write(&path, &bytes).unwrap();
    let r = transform(
        &path,
        &wraps(vec![
            req("run", "()V", 30, false),
            req("twice", "(JLjava/lang/String;)J", 31, true),
        ]),
    );
    assert_eq!(r.wrapped.len(), 2);
    assert_eq!(run(&dir, "Legacy", &[]), "n=3 twice=42 enter=1 exit=1\n");
}

fn ctor_case(id: i32, name: &str) {
    let dir = scratch(name);
    javac(&dir, &["weft/Probe.java", "t/Ctors.java"], &[]);
    let what = |p| Instrumentation {
        wraps: vec![],
        constructor_probe: Some(p),
    };
    let r = transform(&dir.join("t/Ctors.class"), &what(id));
    // Ctors(double) never returns normally: 6 of 7 constructors get the probe.
    assert_eq!(r.constructors, 6);
    assert_eq!(
        transform(&dir.join("t/Sub.class"), &what(id + 1)).constructors,
        1
    );
    let out = run(&dir, "t.Ctors", &[&id.to_string()]);
    // 6 (int) + 2 for () (its this(1) returns too) + 14 (String) + 2 (long) + 2 (int,int) + 2 (boolean)
    // + 1 for Sub's super(7); Sub's own constructor counts under id + 1.
    let expected = "\
-1 10 20 30 40 9 10 1001/alpha 1002/beta 3/init 107/7 1100/x 997/ 39/42 81 1027 3 eq 2 3 uoe 7
created=29 sub=1 last=Sub
";
    assert_eq!(out, expected);
}

#[test]
fn constructor_probe_bipush() {
    ctor_case(100, "ctor_bipush");
}

#[test]
fn constructor_probe_sipush() {
    ctor_case(1001, "ctor_sipush");
}

#[test]
fn constructor_probe_ldc() {
    ctor_case(1 << 20, "ctor_ldc");
}

/// Java source of a class `name` whose method `m(int)` has `n` early returns
/// (`if (x == k) return k;`) inside the loop `shape` (`{body}` is replaced by them).
fn big_class(name: &str, n: usize, shape: &str) -> String {
    let body: String = (0..n)
        .map(|k| format!("if (x == {k}) return {k};\n"))
        .collect();
    format!(
        "public class {name} {{\n  public static int m(int x) {{\n{}\n  }}\n\
         public static void main(String[] a) {{\n    System.out.println(m({}) + \" \" + weft.Probe.counts(\"m\", 1));\n  }}\n}}\n",
        shape.replace("{body}", &body),
        n + 7
    )
}

/// Branches that no longer fit 16 bits once the probes are in: the back `goto` of a loop becomes
/// `goto_w`; a conditional back branch with a stack map frame after it becomes `if<!c> +8; goto_w`;
/// a forward conditional branch with no frame after it is refused (the class stays unchanged).
#[test]
fn widens_branches_of_big_methods() {
    let dir = scratch("big");
    javac(&dir, &["weft/Probe.java"], &[]);
    let n = 2500;
    let cases = [
        ("BigGoto", "while (true) {\n{body}\nx = x - 2500;\n}"),
        (
            "BigDo",
            "do {\n{body}\nif (x < 0) break;\nx = x - 2500;\n} while (x >= 0);\nreturn -1;",
        ),
        (
            "BigFor",
            "for (int i = 0; i < x; i++) {\n{body}\n}\nreturn -1;",
        ),
    ];
    for (name, shape) in cases {
        let src = dir.join(format!("{name}.java"));
        std::fs::write(&src, big_class(name, n, shape)).expect("write source");
        let o = std::process::Command::new(tool("javac"))
            .arg("-nowarn")
            .arg("-d")
            .arg(&dir)
            .arg("-cp")
            .arg(&dir)
            .arg(&src)
            .output()
            .expect("javac");
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    let what = wraps(vec![req("m", "(I)I", 1, false)]);
    for name in ["BigGoto", "BigDo"] {
        let r = transform(&dir.join(format!("{name}.class")), &what);
        assert_eq!(r.wrapped.len(), 1, "{name}");
        // 2507 is 7 on the second pass: one call, one entry, one exit.
        assert_eq!(run(&dir, name, &[]), "7 m: enter=1 exit=1\n", "{name}");
        let o = std::process::Command::new(tool("javap"))
            .args(["-c", "-cp"])
            .arg(&dir)
            .arg(name)
            .output()
            .expect("javap");
        let listing = String::from_utf8_lossy(&o.stdout);
        assert!(listing.contains("goto_w"), "{name}: no branch was widened");
    }
    let bytes = std::fs::read(dir.join("BigFor.class")).unwrap();
    let e = instrument(&bytes, &what).unwrap_err();
    assert_eq!(e.kind(), weft_classfile::ErrorKind::Overflow, "{e}");
    assert!(e.to_string().contains("no stack map frame"), "{e}");
}

/// Type annotations inside the body are moved with it: the `new` one still names the `new`.
#[test]
fn moves_type_annotations_of_the_body() {
    let dir = scratch("typeann");
    javac(&dir, &["weft/Probe.java", "t/TypeAnn.java"], &[]);
    let r = transform(
        &dir.join("t/TypeAnn.class"),
        &wraps(vec![req("run", "()V", 40, false)]),
    );
    assert_eq!(r.wrapped.len(), 1);
    assert_eq!(
        run(&dir, "t.TypeAnn", &[]),
        "seen=[a] run: enter=1 exit=1\n"
    );
    let o = std::process::Command::new(tool("javap"))
        .args(["-v", "-p", "-cp"])
        .arg(&dir)
        .arg("t.TypeAnn")
        .output()
        .expect("javap");
    let listing = String::from_utf8_lossy(&o.stdout);
    let run_part = &listing[listing.find("public void run()").expect("run")..];
    let new_bci = run_part
        .lines()
        .find(|l| l.contains(": new "))
        .and_then(|l| l.trim().split(':').next())
        .expect("a new instruction");
    assert!(
        run_part.contains(&format!("NEW, offset={new_bci}")),
        "the `new` type annotation does not name bci {new_bci}:\n{run_part}"
    );
}
