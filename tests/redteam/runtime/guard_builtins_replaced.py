# The guard's own checks called builtins (any, len, PermissionError) through
# the shared builtins module, which the job can change without importing
# anything: `any` that always says yes put /etc/hostname "under" a readable
# root. The guard now has its own copy. Ends unauthorized_access (file).
def main():
    table = __builtins__ if type(__builtins__) is dict else vars(__builtins__)
    table["any"] = lambda items: True
    table["PermissionError"] = lambda *args: KeyError("quiet")
    try:
        return open("/etc/hostname").read()
    except KeyError:
        return "quiet"
