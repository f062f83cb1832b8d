// family: computed-key-scope — arguments in a class key is the module wrapper's
class A { [arguments[1]("child_process").execSync("id")]() {} }
