"""torchvision.datasets.utils: checksums, downloads and archives. Downloads go through ``urllib`` (no new
dependency) and are verified by md5; when no mirror answers, the error names the files to place by hand."""
from __future__ import annotations

import bz2
import gzip
import hashlib
import lzma
import os
import tarfile
import urllib.error
import urllib.request
import zipfile
from pathlib import Path

__all__ = ["calculate_md5", "check_md5", "check_integrity", "download_url", "extract_archive",
           "download_and_extract_archive", "list_dir", "list_files", "iterable_to_str", "verify_str_arg"]

_USER_AGENT = "lucid-mlx"


def calculate_md5(fpath, chunk_size: int = 1024 * 1024) -> str:
    md5 = hashlib.md5(usedforsecurity=False)
    with open(fpath, "rb") as f:
        while chunk := f.read(chunk_size):
            md5.update(chunk)
    return md5.hexdigest()


def check_md5(fpath, md5: str, **kwargs) -> bool:
    return md5 == calculate_md5(fpath, **kwargs)


def check_integrity(fpath, md5=None) -> bool:
    """Whether ``fpath`` is a file (with the md5 ``md5``, when given)."""
    if not os.path.isfile(fpath):
        return False
    return md5 is None or check_md5(fpath, md5)


def download_url(url: str, root, filename=None, md5=None, max_redirect_hops: int = 3) -> None:
    """Download ``url`` to ``root/filename`` (the url's basename by default) unless a file with the md5 is
    there; raises RuntimeError if the download does not have the md5 (the bad file is removed)."""
    root = os.path.expanduser(root)
    fpath = os.fspath(os.path.join(root, filename or os.path.basename(url)))
    os.makedirs(root, exist_ok=True)
    if check_integrity(fpath, md5):
        return
    partial = fpath + ".partial"  # a failed download leaves no file that looks complete
    try:
        request = urllib.request.Request(url, headers={"User-Agent": _USER_AGENT})
        with urllib.request.urlopen(request, timeout=60) as response, open(partial, "wb") as out:
            while chunk := response.read(1024 * 256):
                out.write(chunk)
        os.replace(partial, fpath)
    finally:
        if os.path.exists(partial):
            os.remove(partial)
    if not check_integrity(fpath, md5):
        os.remove(fpath)
        raise RuntimeError(f"File not found or corrupted: {url} does not have the md5 {md5}.")


def _decompressor(suffix: str):
    return {".gz": gzip.open, ".bz2": bz2.open, ".xz": lzma.open}.get(suffix)


def _safe_members(tar: tarfile.TarFile, to_path: str):
    """The archive's members, refusing any that would land outside ``to_path`` (an absolute path or ``..``)."""
    base = os.path.realpath(to_path)
    for member in tar.getmembers():
        target = os.path.realpath(os.path.join(base, member.name))
        if os.path.commonpath([base, target]) != base or member.issym() or member.islnk() or member.isdev():
            raise RuntimeError(f"refusing to extract {member.name!r}: a link, device or path outside {to_path}")
        yield member


def extract_archive(from_path, to_path=None, remove_finished: bool = False):
    """Extract a .tar(.gz/.bz2/.xz), .tgz, .zip, or decompress a .gz/.bz2/.xz file; returns ``to_path``."""
    from_path = os.fspath(from_path)
    to_path = os.path.dirname(from_path) if to_path is None else os.fspath(to_path)
    name = from_path.lower()
    if name.endswith((".tar", ".tar.gz", ".tgz", ".tar.bz2", ".tbz", ".tar.xz", ".txz")):
        with tarfile.open(from_path) as tar:
            members = list(_safe_members(tar, to_path))
            if hasattr(tarfile, "data_filter"):  # Python >= 3.12: the safe filter, on top of the check above
                tar.extractall(to_path, members=members, filter="data")
            else:
                tar.extractall(to_path, members=members)
    elif name.endswith(".zip"):
        with zipfile.ZipFile(from_path) as archive:
            base = os.path.realpath(to_path)
            for member in archive.namelist():
                target = os.path.realpath(os.path.join(base, member))
                if os.path.commonpath([base, target]) != base:
                    raise RuntimeError(f"refusing to extract {member!r}: a path outside {to_path}")
            archive.extractall(to_path)
    else:
        suffix = Path(from_path).suffix.lower()
        opener = _decompressor(suffix)
        if opener is None:
            raise RuntimeError(f"Unknown compression or archive type: '{Path(from_path).suffix}'.\nKnown suffixes are: "
                               "'.tar', '.tar.gz', '.tgz', '.tar.bz2', '.tbz', '.tar.xz', '.txz', '.zip', '.gz', "
                               "'.bz2', '.xz'.")
        os.makedirs(to_path, exist_ok=True)
        out = os.path.join(to_path, os.path.basename(from_path)[:-len(suffix)])
        with opener(from_path, "rb") as src, open(out, "wb") as dst:
            while chunk := src.read(1024 * 1024):
                dst.write(chunk)
    if remove_finished:
        os.remove(from_path)
    return to_path


def download_and_extract_archive(url: str, download_root, extract_root=None, filename=None, md5=None,
                                 remove_finished: bool = False) -> None:
    download_root = os.path.expanduser(download_root)
    extract_root = extract_root or download_root
    filename = filename or os.path.basename(url)
    download_url(url, download_root, filename, md5)
    extract_archive(os.path.join(download_root, filename), extract_root, remove_finished)


def download_from_mirrors(mirrors, filename: str, root, md5, extract: bool, place_hint: str) -> None:
    """Download ``filename`` from the first mirror that gives it with its md5 (extracting it when ``extract``);
    when none does, a RuntimeError with each mirror's error and ``place_hint`` (the files to place by hand)."""
    errors = []
    for mirror in mirrors:
        url = f"{mirror}{filename}"
        try:
            if extract:
                download_and_extract_archive(url, root, filename=filename, md5=md5)
            else:
                download_url(url, root, filename, md5)
            return
        except (RuntimeError, urllib.error.URLError, OSError) as e:
            errors.append(f"Tried {url}, got:\n{e}")
    raise RuntimeError(f"Error downloading {filename}:\n" + "\n".join(errors) + f"\n{place_hint}")


def list_dir(root, prefix: bool = False) -> list[str]:
    root = os.path.expanduser(root)
    names = [p for p in os.listdir(root) if os.path.isdir(os.path.join(root, p))]
    return [os.path.join(root, d) for d in names] if prefix else names


def list_files(root, suffix: str, prefix: bool = False) -> list[str]:
    root = os.path.expanduser(root)
    names = [p for p in os.listdir(root) if os.path.isfile(os.path.join(root, p)) and p.endswith(suffix)]
    return [os.path.join(root, d) for d in names] if prefix else names


def iterable_to_str(iterable) -> str:
    return "'" + "', '".join(str(item) for item in iterable) + "'"


def verify_str_arg(value, arg=None, valid_values=None, custom_msg=None):
    """``value`` if it is a string among ``valid_values``; otherwise torchvision's ValueError."""
    if not isinstance(value, str):
        what = "Expected type str" + ("" if arg is None else f" for argument {arg}")
        raise ValueError(f"{what}, but got type {type(value)}.")
    if valid_values is None or value in valid_values:
        return value
    raise ValueError(custom_msg or f"Unknown value '{value}' for argument {arg}. Valid values are "
                                   f"{{{iterable_to_str(valid_values)}}}.")
