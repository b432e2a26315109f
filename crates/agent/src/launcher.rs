//! What this JVM runs, from `sun.java.command` (the launcher's main class or jar and
//! its arguments): JDK tools are not recorded, and a trace names its main class.
//!
//! `JAVA_TOOL_OPTIONS` reaches every JVM a script starts, JDK tools included
//! (`javac`, `jar`, `javadoc`, `jlink`, `keytool`…): they run their main class from a
//! JDK module (`jdk.compiler/com.sun.tools.javac.Main`, `java.base/sun.security.tools.
//! keytool.Main`), which an application cannot do for `java.*` modules and does not
//! for `jdk.*` ones. Recording them would give a trace of the compiler (and, as the
//! first JVM of the run, the name meant for the application).

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
}
