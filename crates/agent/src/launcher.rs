//! What this JVM runs, from `sun.java.command` (the launcher's main class or jar and
//! its arguments): JDK tools are not recorded, and a trace names its main class.
//!
//! `JAVA_TOOL_OPTIONS` reaches every JVM a script starts, JDK tools included
//! (`javac`, `jar`, `javadoc`, `jlink`, `keytool`…): they run their main class from a
//! JDK module (`jdk.compiler/com.sun.tools.javac.Main`, `java.base/sun.security.tools.
//! keytool.Main`), which an application cannot do for `java.*` modules and does not
//! for `jdk.*` ones. Recording them would give a trace of the compiler (and, as the
//! first JVM of the run, the name meant for the application).

/// Whether the JVM's options run code of their own before VMInit: another agent
/// (`-javaagent`, `-agentlib`, `-agentpath`: its VMInit may run before ours), a
/// custom system class loader or security manager (created in the start phase), or
/// options the launcher read from an `@argfile` (not visible here). `args` are the
/// JVM's command-line arguments, `env_options` the option variables every JVM (or
/// the launcher) reads; one agent option is ours. The program's own arguments are
/// read as options too: a false alarm only costs the start-up time saved otherwise.
/// The agent then turns its class hook on at OnLoad, so that those classes pass it
/// too (lib.rs, `on_vm_init`).
pub fn loads_code_before_vminit(args: &[String], env_options: &[String]) -> bool {
    let words = args
        .iter()
        .map(String::as_str)
        .chain(env_options.iter().flat_map(|o| o.split_whitespace()));
    let mut agents = 0;
    for w in words {
        if ["-javaagent:", "-agentlib:", "-agentpath:"]
            .iter()
            .any(|p| w.starts_with(p))
        {
            agents += 1;
        }
        let security_manager = w
            .strip_prefix("-Djava.security.manager=")
            .is_some_and(|v| !matches!(v, "" | "allow" | "disallow" | "default"));
        if w.starts_with('@') || w.starts_with("-Djava.system.class.loader=") || security_manager {
            return true;
        }
    }
    agents > 1
}

/// The JDK tool this command runs (its `module/class`), if it is one.
pub fn jdk_tool(command: &str) -> Option<&str> {
    let main = main_of(command);
    let (module, _) = main.split_once('/')?;
    (module.starts_with("jdk.") || module.starts_with("java.")).then_some(main)
}

/// The main class (or jar) of a `sun.java.command` value, without its arguments.
pub fn main_of(command: &str) -> &str {
    command.split_whitespace().next().unwrap_or("")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jdk_tools_are_told_from_applications() {
        for tool in [
            "jdk.compiler/com.sun.tools.javac.Main -d out A.java",
            "jdk.jartool/sun.tools.jar.Main cf x.jar -C out .",
            "java.base/sun.security.tools.keytool.Main -list",
            "jdk.javadoc/jdk.javadoc.internal.tool.Main",
        ] {
            assert!(jdk_tool(tool).is_some(), "{tool}");
        }
        for app in [
            "com.example.Main arg",
            "app.jar --port 80",
            "com.example/com.example.Main",
            "org.apache.spark.deploy.SparkSubmit --class x",
            "",
        ] {
            assert_eq!(jdk_tool(app), None, "{app}");
        }
        assert_eq!(main_of("app.jar --port 80"), "app.jar");
    }

    #[test]
    fn code_before_vminit_is_told_from_the_options() {
        let v = |s: &str| s.split_whitespace().map(String::from).collect::<Vec<_>>();
        let ours = "-agentpath:/x/libweft_agent.so=out=a.weft";
        // (command line after `java` and our agent, option variables, expected)
        let cases = [
            ("-cp . Main", "", false),
            ("-Djava.security.manager=allow Main", "", false),
            ("-javaagent:a.jar Main", "", true),
            ("Main", "-agentlib:jdwp=transport=dt_socket", true),
            ("-Djava.system.class.loader=a.L Main", "", true),
            ("-Djava.security.manager=a.S Main", "", true),
            ("@opts Main", "", true),
        ];
        for (args, env, expected) in cases {
            let args = v(&format!("java {ours} {args}"));
            assert_eq!(
                loads_code_before_vminit(&args, &v(env)),
                expected,
                "{args:?} {env}"
            );
        }
        // Our agent only in JAVA_TOOL_OPTIONS (a script's JVM, a child JVM).
        assert!(!loads_code_before_vminit(&v("java -cp . Main"), &v(ours)));
    }
}
